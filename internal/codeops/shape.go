package codeops

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// cleaner turns terminal output into the text a terminal would end up
// showing, line by line: ANSI escape sequences are dropped, a line redrawn
// with carriage returns keeps its last state, a backspace removes the
// character before it, and other control characters go. It writes the
// cleaned bytes to out.
type cleaner struct {
	out       io.Writer
	state     escState
	line      []byte
	crPending bool // a '\r' was seen: the next character starts the line again
}

type escState uint8

const (
	escNone   escState = iota
	escStart           // after ESC
	escCSI             // ESC [ ... final byte
	escString          // OSC, DCS, SOS, PM, APC: up to BEL or ESC \
	escStrEsc          // ESC inside a string, maybe its terminator
	escOne             // ESC ( and friends: one more byte
)

// maxCleanLine bounds the line held for carriage-return handling; a longer
// line is passed on in pieces.
const maxCleanLine = 64 << 10

func newCleaner(out io.Writer) *cleaner { return &cleaner{out: out} }

func (c *cleaner) Write(p []byte) (int, error) {
	for _, b := range p {
		switch c.state {
		case escStart:
			switch b {
			case '[':
				c.state = escCSI
			case ']', 'P', 'X', '^', '_':
				c.state = escString
			case '(', ')', '*', '+', '-', '.', '/', '#', '%', ' ':
				c.state = escOne
			default:
				c.state = escNone
			}
			continue
		case escCSI:
			if b >= 0x40 && b <= 0x7e || b < 0x20 && b != 0x1b {
				c.state = escNone
			} else if b == 0x1b {
				c.state = escStart
			}
			continue
		case escString:
			switch b {
			case 0x07:
				c.state = escNone
			case 0x1b:
				c.state = escStrEsc
			}
			continue
		case escStrEsc:
			if b == '\\' {
				c.state = escNone
			} else if b != 0x1b {
				c.state = escString
			}
			continue
		case escOne:
			c.state = escNone
			continue
		}
		switch {
		case b == 0x1b:
			c.state = escStart
		case b == '\n':
			c.crPending = false
			c.line = append(c.line, '\n')
			c.flush()
		case b == '\r':
			c.crPending = true
		case b == '\b':
			if n := len(c.line); n > 0 {
				_, size := utf8.DecodeLastRune(c.line)
				c.line = c.line[:n-size]
			}
		case b < 0x20 && b != '\t' || b == 0x7f:
			// other control characters show nothing
		default:
			if c.crPending {
				c.line = c.line[:0]
				c.crPending = false
			}
			c.line = append(c.line, b)
			if len(c.line) >= maxCleanLine {
				c.flush()
			}
		}
	}
	return len(p), nil
}

func (c *cleaner) flush() {
	if len(c.line) > 0 {
		_, _ = c.out.Write(c.line)
		c.line = c.line[:0]
	}
}

// Close passes on the last, unterminated line.
func (c *cleaner) Close() error {
	c.flush()
	return nil
}

// keeper keeps the first and the last n bytes of what is written to it and
// counts the whole, so shaping never holds a long output in memory.
type keeper struct {
	n     int
	head  []byte
	tail  []byte
	total int64
}

func newKeeper(n int) *keeper { return &keeper{n: n} }

func (k *keeper) Write(p []byte) (int, error) {
	k.total += int64(len(p))
	if room := k.n - len(k.head); room > 0 {
		k.head = append(k.head, p[:min(room, len(p))]...)
	}
	k.tail = append(k.tail, p...)
	if len(k.tail) > 2*k.n {
		copy(k.tail, k.tail[len(k.tail)-k.n:])
		k.tail = k.tail[:k.n]
	}
	return len(p), nil
}

// whole reports whether everything written is in head.
func (k *keeper) whole() bool { return k.total <= int64(len(k.head)) }

// last returns the last n bytes written (all of them when fewer).
func (k *keeper) last(n int) []byte {
	if len(k.tail) > n {
		return k.tail[len(k.tail)-n:]
	}
	return k.tail
}

// cleanFile streams a log through a cleaner into a keeper of n bytes.
func cleanFile(r io.Reader, n int) (*keeper, error) {
	k := newKeeper(n)
	c := newCleaner(k)
	if _, err := io.Copy(c, r); err != nil {
		return k, err
	}
	_ = c.Close()
	return k, nil
}

// headBytes is how much of a long output's start is kept; the rest of the
// room goes to its end, where build and test errors are.
const headBytes = 2 << 10

// shapeLong returns the output held by k within budget bytes: whole when it
// fits, else its first 2 KiB and its last bytes around a line giving the
// elided byte count and where the full log is. elided is 0 when whole.
func shapeLong(k *keeper, budget int, logPath string) (text string, elided int64) {
	if k.total <= int64(budget) && k.whole() {
		return string(k.head), 0
	}
	markerFmt := "\n[... %d bytes elided; the full output is in %s ...]\n"
	markerLen := len(fmt.Sprintf(markerFmt, k.total, logPath))
	headRoom := min(headBytes, budget/4)
	tailRoom := budget - headRoom - markerLen
	if tailRoom < 0 {
		tailRoom = 0
	}
	head := cutHead(k.head[:min(headRoom, len(k.head))])
	tail := cutTail(k.last(tailRoom))
	elided = k.total - int64(len(head)) - int64(len(tail))
	var b bytes.Buffer
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] == '\n' {
		b.Truncate(b.Len() - 1)
	}
	fmt.Fprintf(&b, markerFmt, elided, logPath)
	b.Write(tail)
	return b.String(), elided
}

// cutHead ends a kept start at its last line break when there is one in
// its second half, else at a character boundary.
func cutHead(p []byte) []byte {
	if i := bytes.LastIndexByte(p, '\n'); i >= len(p)/2 {
		return p[:i+1]
	}
	for n := len(p); n > 0 && n > len(p)-utf8.UTFMax; n-- {
		if utf8.Valid(p[:n]) {
			return p[:n]
		}
	}
	return p
}

// cutTail starts a kept end after its first line break when there is one
// in its first half, else at a character boundary.
func cutTail(p []byte) []byte {
	if i := bytes.IndexByte(p, '\n'); i >= 0 && i < len(p)/2 {
		return p[i+1:]
	}
	for i := 0; i < len(p) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(p[i]) {
			return p[i:]
		}
	}
	return p
}

// lastLines returns the last n lines of s, without a final line break.
func lastLines(s string, n int) string {
	s = strings.TrimSuffix(s, "\n")
	i := len(s)
	for range n {
		j := strings.LastIndexByte(s[:i], '\n')
		if j < 0 {
			return s
		}
		i = j
	}
	return s[i+1:]
}
