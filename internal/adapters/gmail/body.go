package gmail

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// Where bodies are cut: a lone message keeps more than each message of a
// thread, so a long thread still fits one answer.
const (
	messageBodyRunes = 4000
	threadBodyRunes  = 1500
	snippetRunes     = 200
)

// bodyText is a message's body as plain text: its text/plain parts, or its
// HTML parts reduced to text when it has no plain one. Attachments are left
// out.
func bodyText(p *part) string {
	if p == nil {
		return ""
	}
	var plain, htm []string
	walk(p, func(q *part) {
		if q.Filename != "" || q.Body.Data == "" {
			return
		}
		switch strings.ToLower(q.MimeType) {
		case "text/plain":
			plain = append(plain, decodeData(q.Body.Data))
		case "text/html":
			htm = append(htm, htmlText(decodeData(q.Body.Data)))
		}
	})
	if len(plain) > 0 {
		return strings.Join(plain, "\n")
	}
	return strings.Join(htm, "\n")
}

// attachments lists a message's attached files as "name (bytes)".
func attachments(p *part) string {
	if p == nil {
		return ""
	}
	var out []string
	walk(p, func(q *part) {
		if q.Filename != "" {
			out = append(out, fmt.Sprintf("%s (%d B)", q.Filename, q.Body.Size))
		}
	})
	return strings.Join(out, ", ")
}

func walk(p *part, visit func(*part)) {
	visit(p)
	for i := range p.Parts {
		walk(&p.Parts[i], visit)
	}
}

// decodeData decodes a part's base64url data (padded or not). Bytes that are
// not UTF-8 are read as Latin-1, the usual other charset of mail.
func decodeData(s string) string {
	s = strings.TrimRight(s, "=")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(s); err != nil {
			return ""
		}
	}
	if utf8.Valid(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// Elements whose text is not part of what a reader sees, and elements that
// start a new line.
var (
	hiddenElems = map[string]bool{"script": true, "style": true, "head": true, "title": true, "template": true}
	blockElems  = map[string]bool{"br": true, "p": true, "div": true, "li": true, "tr": true, "table": true,
		"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "blockquote": true, "hr": true}
)

// htmlText reduces an HTML body to its visible text, one line per block.
func htmlText(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	hidden := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			if hidden == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			hiddenElem := hiddenElems[string(name)] // no string allocated for the lookup
			switch {
			case hiddenElem && tt == html.StartTagToken:
				hidden++
			case hiddenElem && tt == html.EndTagToken && hidden > 0:
				hidden--
			case blockElems[string(name)]:
				b.WriteByte('\n')
			}
		}
	}
}

// withoutQuotes drops the quoted lines of a reply ("> …"): in a thread the
// earlier messages are rows of their own.
func withoutQuotes(s string) string {
	lines := strings.Split(s, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), ">") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// oneLine collapses every run of white space to one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clipText cuts s to n runes and says so.
func clipText(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + fmt.Sprintf(" … [clipped: %d of %d characters]", n, total)
}
