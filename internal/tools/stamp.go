package tools

import (
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
)

// Result pipeline parameters.
const (
	// DefaultCap is the platform byte cap of a result, trailer excluded.
	DefaultCap = 64 << 10
	// MinCap is the smallest cap Stamp applies; a smaller Cap is raised to it
	// so the elision note always fits.
	MinCap = 128
	// WrapUpAt is the number of remaining tool calls at or below which a
	// wrap-up line sits above the trailer.
	WrapUpAt = 8
	// TrailerKey starts the last line of every stamped result.
	TrailerKey = "remaining_tool_calls: "
)

// StampOptions are the per-call inputs of Stamp.
type StampOptions struct {
	Filter    func(string) string // the tool's custom filter; nil for none
	Redactor  *Redactor           // the run's secrets; nil redacts nothing
	Cap       int                 // byte cap before the trailer; 0 means DefaultCap
	Remaining int                 // tool calls the run has left after this one
	Log       *slog.Logger        // receives a filter panic; nil means slog.Default()
	// NoTrailer leaves out step 4, for a result no model reads (the Tools
	// view's Test call); Remaining is then ignored.
	NoTrailer bool
}

// Stamp turns a raw tool result into the string that is stored and shown to
// the model. It is the one path every result takes, native or remote:
//
//  1. the tool's custom filter, if any (a panicking filter is skipped);
//  2. redaction of the run's secrets, before anything is cut, so a cut can
//     never leave part of a secret that a whole match would have removed;
//  3. the byte cap: a longer body is cut on a UTF-8 boundary (never inside a
//     redaction marker) and ends with a line giving the number of bytes elided;
//     body and note together never exceed the cap;
//  4. the trailer "remaining_tool_calls: N", after a wrap-up line when N is
//     WrapUpAt or less. The trailer is never cut.
//
// Besides whatever the filter allocates, Stamp allocates once: the result.
func Stamp(raw string, opt StampOptions) string {
	body := raw
	if opt.Filter != nil {
		body = applyFilter(opt.Filter, raw, opt.Log)
	}
	sp := getSpans()
	defer putSpans(sp)
	spans := opt.Redactor.find(body, (*sp)[:0])
	*sp = spans

	limit := opt.Cap
	if limit <= 0 {
		limit = DefaultCap
	}
	limit = max(limit, MinCap)

	var tb [256]byte
	var trailer []byte
	if !opt.NoTrailer {
		trailer = appendTrailer(tb[:0], opt.Remaining, body != "")
	}

	full := redactedLen(len(body), spans)
	var b strings.Builder
	if full <= limit {
		b.Grow(full + len(trailer))
		writeRedacted(&b, body, spans, full)
		b.Write(trailer)
		return b.String()
	}
	var nb [96]byte
	noteMax := len(appendElided(nb[:0], full)) // the note for the most bytes possibly elided
	b.Grow(limit + len(trailer))
	kept := writeRedacted(&b, body, spans, limit-noteMax)
	b.Write(appendElided(nb[:0], full-kept))
	b.Write(trailer)
	return b.String()
}

// writeRedacted writes body with spans replaced by the marker, stopping at
// budget bytes; it returns the bytes written. A text piece is cut on a UTF-8
// boundary and a marker is written whole or not at all.
func writeRedacted(b *strings.Builder, body string, spans []span, budget int) int {
	n, last := 0, 0
	for _, x := range spans {
		seg := body[last:x.start]
		if n+len(seg) > budget {
			return n + writeCut(b, seg, budget-n)
		}
		b.WriteString(seg)
		n += len(seg)
		if n+len(RedactionMarker) > budget {
			return n
		}
		b.WriteString(RedactionMarker)
		n += len(RedactionMarker)
		last = x.end
	}
	seg := body[last:]
	if n+len(seg) > budget {
		return n + writeCut(b, seg, budget-n)
	}
	b.WriteString(seg)
	return n + len(seg)
}

func writeCut(b *strings.Builder, s string, room int) int {
	c := utf8Cut(s, room)
	b.WriteString(s[:c])
	return c
}

// appendElided appends the note that ends a cut body.
func appendElided(dst []byte, elided int) []byte {
	dst = append(dst, "\n[... "...)
	dst = strconv.AppendInt(dst, int64(elided), 10)
	return append(dst, " bytes elided: the result was over the byte cap]"...)
}

// appendTrailer appends the remaining_tool_calls trailer, preceded by a blank
// line when the body is not empty and by a wrap-up line when few calls remain.
func appendTrailer(dst []byte, remaining int, sep bool) []byte {
	remaining = max(remaining, 0)
	if sep {
		dst = append(dst, "\n\n"...)
	}
	if remaining <= WrapUpAt {
		switch remaining {
		case 0:
			dst = append(dst, "No tool calls remain: do not call another tool; give your final answer now."...)
		case 1:
			dst = append(dst, "Only 1 tool call remains: wrap up and give your final answer."...)
		default:
			dst = append(dst, "Only "...)
			dst = strconv.AppendInt(dst, int64(remaining), 10)
			dst = append(dst, " tool calls remain: wrap up and give your final answer."...)
		}
		dst = append(dst, '\n')
	}
	dst = append(dst, TrailerKey...)
	return strconv.AppendInt(dst, int64(remaining), 10)
}

// applyFilter runs a tool's custom filter; a panic leaves raw unfiltered
// (redaction and the cap still follow) and is logged without the result.
func applyFilter(f func(string) string, raw string, log *slog.Logger) (out string) {
	defer func() {
		if p := recover(); p != nil {
			if log == nil {
				log = slog.Default()
			}
			// The panic value may quote the result; log its type, or the
			// message of a runtime error, which never carries data.
			detail := fmt.Sprintf("%T", p)
			if re, ok := p.(runtime.Error); ok {
				detail = re.Error()
			}
			log.Error("tool result filter panicked; result left unfiltered", slog.String("panic", detail))
			out = raw
		}
	}()
	return f(raw)
}
