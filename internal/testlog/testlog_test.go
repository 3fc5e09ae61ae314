package testlog

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

func TestWaitForEndsOnTheWrite(t *testing.T) {
	var l Buffer
	go func() {
		for i := range 3 {
			fmt.Fprintf(&l, "line %d\n", i)
		}
	}()
	l.WaitFor(t, "line 2", time.Minute)
	if n := l.Count("line "); n != 3 {
		t.Fatalf("Count = %d, want 3", n)
	}
}

func TestWaitForFailsAtItsBound(t *testing.T) {
	var l Buffer
	fmt.Fprintln(&l, "something else")
	ft := &fatalRecorder{T: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.WaitFor(ft, "never", time.Millisecond)
	}()
	<-done
	if ft.msg == "" {
		t.Fatal("WaitFor returned without the line and without failing")
	}
}

// fatalRecorder records a Fatalf and ends its goroutine as testing.T would.
type fatalRecorder struct {
	*testing.T
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
