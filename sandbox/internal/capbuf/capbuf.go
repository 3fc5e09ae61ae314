// Package capbuf is a write sink that keeps the first N bytes and counts the
// rest, so a chatty command can be drained without unbounded memory.
package capbuf

// Buffer keeps at most Max bytes. Writes never fail: the producer must be
// drained to the end even when its output is discarded.
type Buffer struct {
	Max       int
	buf       []byte
	truncated bool
}

// New returns a Buffer keeping at most max bytes.
func New(max int) *Buffer { return &Buffer{Max: max} }

func (b *Buffer) Write(p []byte) (int, error) {
	room := b.Max - len(b.buf)
	if room >= len(p) {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	b.truncated = true
	return len(p), nil
}

// Bytes returns the kept bytes.
func (b *Buffer) Bytes() []byte { return b.buf }

// Truncated reports whether anything was discarded.
func (b *Buffer) Truncated() bool { return b.truncated }
