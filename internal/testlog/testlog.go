// Package testlog is a log sink that a test reads while the code under
// test is still writing to it, and waits on for a line: the wait ends on
// the write itself, so a slow machine only makes it end later.
package testlog

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer collects what is written to it; the zero value is ready to use.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed and replaced by every write
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.written != nil {
		close(l.written)
		l.written = nil
	}
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Count is how many times s occurs in what was written.
func (l *Buffer) Count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// WaitFor returns once s has been written, failing the test with the log
// if it has not within bound (a failure bound, not a pace).
func (l *Buffer) WaitFor(t testing.TB, s string, bound time.Duration) {
	t.Helper()
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		found := strings.Contains(l.b.String(), s)
		if l.written == nil {
			l.written = make(chan struct{})
		}
		written := l.written
		l.mu.Unlock()
		if found {
			return
		}
		select {
		case <-written:
		case <-deadline.C:
			t.Fatalf("no %q written within %v:\n%s", s, bound, l.String())
		}
	}
}
