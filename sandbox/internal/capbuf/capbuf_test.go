package capbuf

import "testing"

func TestBuffer(t *testing.T) {
	b := New(5)
	for _, p := range []string{"ab", "cd", "efgh", "ij"} {
		if n, err := b.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if string(b.Bytes()) != "abcde" || !b.Truncated() {
		t.Fatalf("kept %q, truncated %v", b.Bytes(), b.Truncated())
	}
	exact := New(2)
	_, _ = exact.Write([]byte("ab"))
	if exact.Truncated() {
		t.Fatal("a write that fits exactly is not truncated")
	}
}
