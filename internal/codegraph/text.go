package codegraph

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxLine clips a shown source line, as text search does.
const maxLine = 300

// lines collects a result line by line and stops at the cap, counting
// what it left out.
type lines struct {
	max  int
	b    strings.Builder
	left int
	hint string // what narrows a result that was cut
}

func newLines(max int, hint string) *lines { return &lines{max: max, hint: hint} }

// reserve keeps room for the closing line.
const reserve = 120

func (l *lines) add(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	if l.left > 0 || l.b.Len()+len(s)+1 > l.max-reserve {
		l.left++
		return
	}
	l.b.WriteString(s)
	l.b.WriteByte('\n')
}

func (l *lines) full() bool { return l.left > 0 }

func (l *lines) String() string {
	s := l.b.String()
	if l.left > 0 {
		s += fmt.Sprintf("… %d more lines left out%s\n", l.left, l.hint)
	}
	return strings.TrimRight(s, "\n")
}

// clip shortens a source line to maxLine characters, saying how many it cut.
func clip(s string) string {
	s = strings.TrimRight(s, "\r")
	if utf8.RuneCountInString(s) <= maxLine {
		return s
	}
	r := []rune(s)
	return fmt.Sprintf("%s… (+%d chars)", string(r[:maxLine]), len(r)-maxLine)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func span(d *Def) string {
	if d.End > d.Line {
		return fmt.Sprintf("%d-%d", d.Line, d.End)
	}
	return fmt.Sprintf("%d", d.Line)
}
