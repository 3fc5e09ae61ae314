package tools

import "unicode/utf8"

// utf8Cut returns the largest n' <= n such that s[:n'] does not end inside a
// multi-byte UTF-8 sequence. Invalid bytes count as single characters.
func utf8Cut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	// Step back over at most 3 continuation bytes to the start of the rune
	// that s[n] belongs to, then keep it only if it ends at or before n.
	i := n
	for j := 0; j < utf8.UTFMax-1 && i > 0 && !utf8.RuneStart(s[i]); j++ {
		i--
	}
	if !utf8.RuneStart(s[i]) {
		return n // not UTF-8 here; any cut is as good as another
	}
	if _, size := utf8.DecodeRuneInString(s[i:]); i+size <= n {
		return n
	}
	return i
}

// truncateUTF8 returns s cut to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string { return s[:utf8Cut(s, n)] }
