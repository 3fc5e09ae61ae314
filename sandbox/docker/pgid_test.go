package docker

import (
	"bytes"
	"testing"
)

func TestPgidWriter(t *testing.T) {
	for _, chunks := range [][]string{
		{"42\nerr\n"},
		{"4", "2", "\n", "err\n"},
		{"42\n", "err\n"},
	} {
		var rest bytes.Buffer
		w := &pgidWriter{next: &rest, known: make(chan struct{})}
		for _, c := range chunks {
			if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", c, n, err)
			}
		}
		select {
		case <-w.known:
		default:
			t.Fatalf("%q: group id not announced", chunks)
		}
		if w.pgid != 42 || rest.String() != "err\n" {
			t.Errorf("%q: pgid %d, rest %q", chunks, w.pgid, rest.String())
		}
	}
	// Output that does not start with a number is passed on whole.
	var rest bytes.Buffer
	w := &pgidWriter{next: &rest, known: make(chan struct{})}
	_, _ = w.Write([]byte("a long first line that is not a process group id\n"))
	_, _ = w.Write([]byte("more\n"))
	if w.pgid != 0 || rest.String() != "a long first line that is not a process group id\nmore\n" {
		t.Errorf("pgid %d, rest %q", w.pgid, rest.String())
	}
}
