package tools

import (
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
)

// The forms and cases issue 11 found missing: hexadecimal, lowercase
// percent-encoding, values too short to redact, and a secret split across
// the pieces of a streamed text.
func TestRedactHexAndLowercaseEscapes(t *testing.T) {
	r := NewRedactor([]string{testSecret}, quietLog)
	h := hex.EncodeToString([]byte(testSecret))
	forms := map[string]string{
		"hex lower":       h,
		"hex upper":       strings.ToUpper(h),
		"hex in hex text": "00ff" + h + "0a",
		"query lowercase": lowerEscapes(url.QueryEscape(testSecret)),
		"path lowercase":  lowerEscapes(url.PathEscape(testSecret)),
	}
	for name, f := range forms {
		t.Run(name, func(t *testing.T) {
			got := r.Redact("before " + f + " after")
			if strings.Contains(got, f[:FragmentMin]) || !strings.Contains(got, RedactionMarker) || !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
				t.Fatalf("form %q: %q", f, got)
			}
		})
	}
	// A lowercase escape of a secret whose other letters are uppercase is
	// only caught by the lowercase-escape form, not by lowering everything.
	mixed := "ABCD/EFGH+IJKL"
	got := NewRedactor([]string{mixed}, quietLog).Redact("q=" + "ABCD%2fEFGH%2bIJKL")
	if got != "q="+RedactionMarker {
		t.Fatalf("lowercase escapes: %q", got)
	}
}

func TestCheckRedactable(t *testing.T) {
	for _, v := range []string{"", "1234", "hunter2"} {
		if err := CheckRedactable(v); err == nil || !strings.Contains(err.Error(), "at least 8 characters") {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, v := range []string{"12345678", testSecret} {
		if err := CheckRedactable(v); err != nil {
			t.Errorf("%q refused: %v", v, err)
		}
	}
	// What CheckRedactable accepts, NewRedactor keeps.
	if NewRedactor([]string{"12345678"}, quietLog).Redact("pin 12345678") != "pin "+RedactionMarker {
		t.Fatal("an accepted value is not redacted")
	}
}

// A secret split across written pieces, at every split point and in every
// form, is redacted as if the text had come whole.
func TestWriterRedactsSecretSplitAcrossPieces(t *testing.T) {
	long := "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := NewRedactor([]string{long, testSecret, "abcdefghijkl", "ghijklmnopqrstuv"}, quietLog)
	texts := []string{
		"token " + long + " end",
		"hex " + strings.ToUpper(hex.EncodeToString([]byte(testSecret))) + ".",
		"q=" + lowerEscapes(url.QueryEscape(testSecret)),
		"overlap xx abcdefghijklmnopqrstuv yy", // two secrets that overlap, one marker
		"cut at the end: " + long[:20],         // a start cut off by the end of the text
		"nothing secret in here at all, just words",
	}
	for _, text := range texts {
		want := r.Redact(text)
		for i := 0; i <= len(text); i++ {
			for _, j := range []int{i, min(i+1, len(text)), min(i+7, len(text)), len(text)} {
				var b strings.Builder
				w := r.Writer(&b)
				for _, piece := range []string{text[:i], text[i:j], text[j:]} {
					if _, err := w.Write([]byte(piece)); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if got := collapseMarkers(b.String()); got != collapseMarkers(want) {
					t.Fatalf("split at %d,%d of %q:\ngot  %q\nwant %q", i, j, text, got, want)
				}
			}
		}
	}
	// Byte by byte.
	var b strings.Builder
	w := r.Writer(&b)
	for i := range len(texts[0]) {
		_, _ = w.Write([]byte{texts[0][i]})
	}
	_ = w.Close()
	if b.String() != "token [REDACTED] end" {
		t.Fatalf("byte by byte: %q", b.String())
	}
	if r.Holdback() != len(strings.ToUpper(hex.EncodeToString([]byte(long))))-1 {
		t.Fatalf("Holdback = %d", r.Holdback())
	}
	var nilR *Redactor
	b.Reset()
	w = nilR.Writer(&b)
	_, _ = w.Write([]byte("plain " + long))
	_ = w.Close()
	if b.String() != "plain "+long || nilR.Holdback() != 0 {
		t.Fatalf("nil redactor: %q", b.String())
	}
}

// collapseMarkers joins adjacent markers: pieces can end between two secrets
// that a whole text would have merged into one marker.
func collapseMarkers(s string) string {
	for strings.Contains(s, RedactionMarker+RedactionMarker) {
		s = strings.ReplaceAll(s, RedactionMarker+RedactionMarker, RedactionMarker)
	}
	return s
}
