package codeops

import (
	"fmt"
	"strings"
	"testing"
)

func clean(s string) string {
	var b strings.Builder
	c := newCleaner(&b)
	// Byte by byte too, so a sequence split across writes is handled.
	for i := 0; i < len(s); i++ {
		_, _ = c.Write([]byte{s[i]})
	}
	_ = c.Close()
	return b.String()
}

func TestCleanerRemovesEscapesAndCollapsesRedraws(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello\nworld\n", "hello\nworld\n"},
		{"color", "\x1b[31mred\x1b[0m \x1b[1;32mgreen\x1b[m\n", "red green\n"},
		{"cursor and erase", "\x1b[2K\x1b[1Gdone\x1b[?25h\n", "done\n"},
		{"osc title bel", "\x1b]0;title\x07text\n", "text\n"},
		{"osc link st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
		{"charset", "\x1b(Babc\n", "abc\n"},
		{"progress redraw", "  0%\r 50%\r100%\n", "100%\n"},
		{"redraw then trailing cr", "a 1/3\ra 2/3\ra 3/3\r\nnext\n", "a 3/3\nnext\n"},
		{"crlf kept as line end", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"unterminated last line", "x\r", "x"},
		{"backspace", "ab\bc\n", "ac\n"},
		{"bell and nul dropped", "a\x07b\x00c\n", "abc\n"},
		{"tabs kept", "a\tb\n", "a\tb\n"},
		{"utf8 kept", "héllo → ✓\n", "héllo → ✓\n"},
		{"colored progress", "\x1b[32m10%\x1b[0m\r\x1b[32m100%\x1b[0m\n", "100%\n"},
	} {
		if got := clean(tc.in); got != tc.want {
			t.Errorf("%s: clean(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestKeeperKeepsBothEnds(t *testing.T) {
	k := newKeeper(10)
	for i := range 100 {
		_, _ = fmt.Fprintf(k, "%d,", i)
	}
	if k.total != 290 || string(k.head) != "0,1,2,3,4," || string(k.last(6)) != "98,99," || k.whole() {
		t.Fatalf("total %d head %q tail %q", k.total, k.head, k.last(6))
	}
}

// longOutput is a build log: 300 numbered lines with ANSI colors and a
// progress bar redrawn with carriage returns, ending in an error.
func longOutput() string {
	var b strings.Builder
	b.WriteString("downloading 0%\rdownloading 50%\rdownloading 100%\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "\x1b[32mok\x1b[0m   step %03d of the build, compiling package number %03d\n", i, i)
	}
	b.WriteString("\x1b[31mFAIL\x1b[0m main_test.go:12: expected 2, got 3\n")
	return b.String()
}

func TestShapeLongGolden(t *testing.T) {
	k := newKeeper(8192)
	c := newCleaner(k)
	_, _ = c.Write([]byte(longOutput()))
	_ = c.Close()
	text, elided := shapeLong(k, 8192-len("exit_code: 1\n")-1, "/home/agent/.runs/r1/c1.log")
	if elided <= 0 || len(text) > 8192 {
		t.Fatalf("elided %d, %d bytes", elided, len(text))
	}
	if !strings.HasPrefix(text, "downloading 100%\n") || !strings.HasSuffix(text, "FAIL main_test.go:12: expected 2, got 3\n") {
		t.Fatalf("ends not kept:\n%s", text)
	}
	head, _, _ := strings.Cut(text, "\n[...")
	if len(head) > 2048 {
		t.Fatalf("head is %d bytes", len(head))
	}
	if int64(len(text)) >= k.total {
		t.Fatal("not shortened")
	}
	golden(t, "shell_long.golden", text)
}

func TestShapeShortIsWhole(t *testing.T) {
	k := newKeeper(100)
	_, _ = k.Write([]byte("short\n"))
	if text, elided := shapeLong(k, 99, "/x.log"); text != "short\n" || elided != 0 {
		t.Fatalf("%q %d", text, elided)
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"}, {"a\nb\nc", 5, "a\nb\nc"}, {"", 3, ""}, {"a\nb", 1, "b"},
	} {
		if got := lastLines(tc.in, tc.n); got != tc.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestCapText(t *testing.T) {
	s := strings.Repeat("é", 100)
	got := CapText(s, 60)
	if len(got) > 60 || !strings.HasSuffix(got, "[result cut at the 60 byte cap]") {
		t.Fatalf("%q", got)
	}
	if CapText("ok", 60) != "ok" {
		t.Fatal("short text changed")
	}
}
