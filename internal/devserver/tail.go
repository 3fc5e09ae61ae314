package devserver

import (
	"strings"
	"sync"
)

// tailWriter keeps the last few KiB written to it.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 4096

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > tailSize {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-tailSize:]...)
	}
	return len(p), nil
}

// lastLine is the last non-empty line written, on one line.
func (w *tailWriter) lastLine() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(w.buf)), "\n")
	return strings.Join(strings.Fields(lines[len(lines)-1]), " ")
}
