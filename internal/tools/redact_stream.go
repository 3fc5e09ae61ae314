package tools

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Holdback is how many trailing bytes of a text that arrives in pieces must
// be kept back until more arrives: the longest form of a secret less one. A
// secret split across pieces is then always seen whole.
func (r *Redactor) Holdback() int {
	if r == nil || r.longest == 0 {
		return 0
	}
	return r.longest - 1
}

// Writer redacts a text written to it in pieces (a streamed answer, a log
// fed as it comes) and passes it on to the underlying writer. Redacting each
// piece on its own would miss a secret split across two of them; the Writer
// keeps back the last Holdback bytes, and any redaction that reaches into
// them, until the next piece or Close. It is not safe for concurrent use.
type Writer struct {
	r       *Redactor
	w       io.Writer
	pending string
}

// Writer returns a Writer that redacts into w. Close must be called at the
// end of the text: it writes what was kept back.
func (r *Redactor) Writer(w io.Writer) *Writer { return &Writer{r: r, w: w} }

// Write takes the next piece of the text. It reports len(p) unless the
// underlying writer fails.
func (sw *Writer) Write(p []byte) (int, error) {
	text := sw.pending + string(p)
	cut := len(text) - sw.r.Holdback()
	for cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut--
	}
	if cut <= 0 {
		sw.pending = text
		return len(p), nil
	}
	sp := getSpans()
	defer putSpans(sp)
	*sp = sw.r.find(text, (*sp)[:0])
	// A secret starting before cut is wholly inside text, so its span is
	// final. A span that reaches past cut may still grow (an overlapping
	// secret can start after cut): keep it back whole.
	spans := *sp
	for len(spans) > 0 && spans[len(spans)-1].start >= cut {
		spans = spans[:len(spans)-1]
	}
	if n := len(spans); n > 0 && spans[n-1].end > cut {
		cut = spans[n-1].start
		spans = spans[:n-1]
	}
	var b strings.Builder
	b.Grow(redactedLen(cut, spans))
	writeRedacted(&b, text[:cut], spans, redactedLen(cut, spans))
	sw.pending = text[cut:]
	if _, err := io.WriteString(sw.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes what was kept back, redacted as the end of the text (a
// secret's start cut off by the end is redacted too). It does not close the
// underlying writer.
func (sw *Writer) Close() error {
	rest := sw.r.Redact(sw.pending)
	sw.pending = ""
	_, err := io.WriteString(sw.w, rest)
	return err
}
