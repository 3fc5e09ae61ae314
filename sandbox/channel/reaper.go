//go:build linux

package channel

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// reaper waits for every child of the process, as PID 1 must, and hands
// each exit status to the command that started it. Orphans adopted from
// commands (their background children) are reaped and dropped.
type reaper struct {
	mu      sync.Mutex
	waiting map[int]chan syscall.WaitStatus
}

var (
	theReaper  *reaper
	reaperOnce sync.Once
)

// newReaper returns the process's one reaper: two would steal each other's
// children.
func newReaper() *reaper {
	reaperOnce.Do(func() { theReaper = startReaper() })
	return theReaper
}

func startReaper() *reaper {
	r := &reaper{waiting: map[int]chan syscall.WaitStatus{}}
	sig := make(chan os.Signal, 16)
	signal.Notify(sig, syscall.SIGCHLD)
	go func() {
		for range sig {
			r.reap()
		}
	}()
	return r
}

func (r *reaper) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		if ch, ok := r.waiting[pid]; ok {
			delete(r.waiting, pid)
			ch <- ws
		}
		// Unknown pids are orphans (or a start racing us: start holds mu
		// across fork and registration, so that cannot happen).
	}
}

// start forks argv in a new process group and returns its pid and a
// channel that receives its exit status.
func (r *reaper) start(argv []string, attr *syscall.ProcAttr) (int, <-chan syscall.WaitStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := syscall.ForkExec(argv[0], argv, attr) //nolint:gosec // G204: running the agent's command is what the sandbox is for
	if err != nil {
		return 0, nil, err
	}
	ch := make(chan syscall.WaitStatus, 1)
	r.waiting[pid] = ch
	return pid, ch, nil
}
