package tools

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Redaction parameters.
const (
	// MinSecretLen is the shortest value the redactor replaces. Shorter values
	// (a PIN, "true", a port number) would turn ordinary words and numbers of
	// every result into markers and still protect nothing; NewRedactor logs a
	// warning, without the value, for each one it skips. Every place that
	// stores a secret refuses a shorter one with CheckRedactable, so a stored
	// secret is always redacted.
	MinSecretLen = 8

	// FragmentMin is the shortest start of a secret that is redacted when the
	// rest of the secret does not follow: a value cut by a tool's own clipping,
	// by the end of the text or by an upstream cap. Together with redacting
	// before the byte cap, it means no stamped result shows 12 or more leading
	// bytes of a secret (in any encoding the redactor knows).
	FragmentMin = 12

	// RedactionMarker replaces each redacted run of bytes.
	RedactionMarker = "[REDACTED]"
)

// window is the number of leading bytes of a pattern used to find candidates.
// Every pattern is at least MinSecretLen >= window bytes long.
const window = 8

// Redactor replaces a run's secret values in tool results. It is built once
// per run by NewRedactor and is safe for concurrent use. A nil *Redactor
// redacts nothing.
//
// Each secret is searched for in the forms a tool is likely to print it:
// as is; URL-encoded (query and path escaping, with upper- and lowercase hex
// digits); JSON-escaped (with and without HTML escaping, and with "\/");
// hexadecimal (lower- and uppercase); base64 in the standard and URL
// alphabets, padded and raw, including inside a longer base64 text at any of
// the three byte alignments (only the characters that depend on the secret
// alone are matched, so at most 4 bits of it stay visible next to a marker).
// Overlapping and adjacent matches become one marker. A text that arrives
// in pieces is redacted with [Redactor.Writer], never piece by piece.
//
// Search cost hardly grows with the number of secrets. Every pattern is at
// least 8 bytes long, so an occurrence starting at byte i covers the 4-byte
// block at the next multiple of 4, j in [i, i+3], and that block is the
// pattern's bytes at offset j-i. The scan reads the text 4 bytes at a time
// and tests each aligned block against a bitset of the blocks found at
// offsets 0 to 3 of every pattern; only on a hit does it look at the (up to
// four) possible starts, test their first 8 bytes against a second bitset,
// and compare the surviving candidates byte for byte. One pass over the text,
// no allocation when nothing matches.
type Redactor struct {
	patterns []string
	blocks   bitset             // 4-byte blocks at offsets 0..3 of every pattern
	heads    bitset             // first 8 bytes of every pattern
	cands    map[uint64][]int32 // first 8 bytes -> pattern indexes, longest first
	secrets  int                // secret values kept
	longest  int                // bytes of the longest pattern
}

// hashMul spreads 8 text bytes over the bitset (Fibonacci hashing).
const hashMul = 0x9E3779B97F4A7C15

// NewRedactor builds the redactor of a run from its secret values. Empty
// values are ignored; values shorter than MinSecretLen are skipped with a
// warning on log (nil means slog.Default()). Values are never logged.
func NewRedactor(secrets []string, log *slog.Logger) *Redactor {
	if log == nil {
		log = slog.Default()
	}
	r := &Redactor{cands: map[uint64][]int32{}}
	seen := map[string]bool{}
	short := 0
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if len(s) < MinSecretLen {
			short++
			continue
		}
		r.secrets++
		for _, f := range encodedForms(s) {
			if len(f) >= MinSecretLen && !seen[f] {
				seen[f] = true
				r.patterns = append(r.patterns, f)
			}
		}
	}
	if short > 0 {
		log.Warn("secret values too short to redact are not redacted",
			slog.Int("count", short), slog.Int("min_len", MinSecretLen))
	}
	// Longest first, so the first full match among candidates is the longest.
	sort.SliceStable(r.patterns, func(i, j int) bool { return len(r.patterns[i]) > len(r.patterns[j]) })
	if len(r.patterns) > 0 {
		r.longest = len(r.patterns[0])
	}
	r.blocks = newBitset(4 * len(r.patterns))
	r.heads = newBitset(len(r.patterns))
	for i, p := range r.patterns {
		for o := 0; o < 4; o++ {
			r.blocks.set(uint64(load32(p, o)))
		}
		k := load64(p, 0)
		r.heads.set(k)
		r.cands[k] = append(r.cands[k], int32(i))
	}
	return r
}

// bitset is a one-hash Bloom filter over 64-bit keys.
type bitset struct {
	words []uint64
	shift uint // 64 - log2(bits)
}

// newBitset sizes the set at 32 bits per key (about 3% false hits when full).
func newBitset(keys int) bitset {
	n := 1 << 12
	for n < 32*keys {
		n <<= 1
	}
	return bitset{words: make([]uint64, n/64), shift: 64 - uint(log2(n))}
}

func (b bitset) set(k uint64) {
	h := (k * hashMul) >> b.shift
	b.words[h>>6] |= 1 << (h & 63)
}

func (b bitset) has(k uint64) bool {
	h := (k * hashMul) >> b.shift
	return b.words[h>>6]&(1<<(h&63)) != 0
}

// Secrets returns how many secret values the redactor looks for.
func (r *Redactor) Secrets() int {
	if r == nil {
		return 0
	}
	return r.secrets
}

// Redact returns s with every secret replaced by RedactionMarker. When
// nothing matches it returns s itself.
func (r *Redactor) Redact(s string) string {
	sp := getSpans()
	defer putSpans(sp)
	*sp = r.find(s, (*sp)[:0])
	if len(*sp) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(redactedLen(len(s), *sp))
	last := 0
	for _, x := range *sp {
		b.WriteString(s[last:x.start])
		b.WriteString(RedactionMarker)
		last = x.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// span is a byte range [start, end) of a text to replace.
type span struct{ start, end int }

// find appends to dst the sorted, merged ranges of s to redact.
func (r *Redactor) find(s string, dst []span) []span {
	if r == nil || len(r.patterns) == 0 || len(s) < window {
		return dst
	}
	blocks := r.blocks
	next := 0 // first start not yet examined
	for j := 0; j+4 <= len(s); j += 4 {
		if !blocks.has(uint64(load32(s, j))) {
			continue
		}
		for i := max(j-3, next); i <= j && i+window <= len(s); i++ {
			k := load64(s, i)
			if !r.heads.has(k) {
				continue
			}
			end := r.match(s, i, k)
			if end <= i {
				continue
			}
			dst = addSpan(dst, s, i, end)
		}
		next = j + 1
	}
	return dst
}

// addSpan appends [start, end) to the sorted spans, widened to whole UTF-8
// characters (a secret that is not valid UTF-8 may start or end inside one)
// and merged with the spans it overlaps or touches.
func addSpan(dst []span, s string, start, end int) []span {
	for j := 0; j < utf8.UTFMax-1 && start > 0 && !utf8.RuneStart(s[start]); j++ {
		start--
	}
	for j := 0; j < utf8.UTFMax-1 && end < len(s) && !utf8.RuneStart(s[end]); j++ {
		end++
	}
	for n := len(dst); n > 0 && start <= dst[n-1].end; n = len(dst) {
		start = min(start, dst[n-1].start)
		end = max(end, dst[n-1].end)
		dst = dst[:n-1]
	}
	return append(dst, span{start, end})
}

// match returns the end of the longest pattern or pattern fragment starting
// at s[i], or i when there is none.
func (r *Redactor) match(s string, i int, k uint64) int {
	best := i
	for _, pi := range r.cands[k] {
		p := r.patterns[pi]
		n := window + commonPrefix(s[i+window:], p[window:])
		if n == len(p) {
			return max(best, i+n) // longest full match: patterns are longest first
		}
		if n >= FragmentMin && i+n > best {
			best = i + n
		}
	}
	return best
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && load64(a, i) == load64(b, i) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// load32 reads 4 bytes of s at i as a little-endian integer.
func load32(s string, i int) uint32 {
	b := s[i : i+4]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// load64 reads 8 bytes of s at i as a little-endian integer.
func load64(s string, i int) uint64 {
	b := s[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

func redactedLen(n int, spans []span) int {
	for _, x := range spans {
		n += len(RedactionMarker) - (x.end - x.start)
	}
	return n
}

var spanPool = sync.Pool{New: func() any { s := make([]span, 0, 16); return &s }}

func getSpans() *[]span { return spanPool.Get().(*[]span) }

func putSpans(s *[]span) {
	if cap(*s) > 1<<16 {
		return // do not keep a huge buffer alive
	}
	*s = (*s)[:0]
	spanPool.Put(s)
}

// CheckRedactable reports whether a secret can be redacted from tool results:
// it must be at least MinSecretLen bytes. Every place that stores a value
// which joins a run's redaction set calls it and refuses the value otherwise,
// so no stored secret is silently left out of redaction.
func CheckRedactable(value string) error {
	if len(value) < MinSecretLen {
		return fmt.Errorf("must be at least %d characters, so that it can be redacted from tool results", MinSecretLen)
	}
	return nil
}

// encodedForms lists the byte strings that reveal s in a tool result.
func encodedForms(s string) []string {
	q, p := url.QueryEscape(s), url.PathEscape(s)
	forms := []string{s, q, p, lowerEscapes(q), lowerEscapes(p),
		hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s)))}
	if j, err := json.Marshal(s); err == nil {
		js := string(j[1 : len(j)-1])
		forms = append(forms, js, strings.ReplaceAll(js, "/", `\/`))
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) == nil {
		js := strings.TrimSuffix(buf.String(), "\n")
		forms = append(forms, js[1:len(js)-1])
	}
	for _, e := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		forms = append(forms, e.EncodeToString([]byte(s)))
		raw := e.WithPadding(base64.NoPadding)
		forms = append(forms, raw.EncodeToString([]byte(s)))
		// Inside a longer base64 text the secret starts at byte offset 0, 1
		// or 2 of a 3-byte group; keep the characters made of its bits only.
		for k := 0; k < 3; k++ {
			buf := make([]byte, k+len(s))
			copy(buf[k:], s)
			full := raw.EncodeToString(buf)
			start := (8*k + 5) / 6
			end := 8 * (k + len(s)) / 6
			if end > start {
				forms = append(forms, full[start:end])
			}
		}
	}
	return forms
}

// lowerEscapes writes the hex digits of every %XX escape of s in lowercase,
// as some encoders do (RFC 3986 lets them).
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}
