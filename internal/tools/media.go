package tools

import (
	"fmt"
	"strings"
)

// MaxImageBytes is the largest image a tool result may keep: a bigger one is
// described in the text and dropped (neither stored nor sent to the model).
const MaxImageBytes = 5 << 20

// Part is one piece of a tool's answer, in the order the tool gave them:
// text the model reads, an image kept aside from that text, or an app (an
// MCP App page) shown to the operator only.
type Part struct {
	Text  string
	Image *Image
	App   *App
}

// Image is an image a tool returned. Data is nil when the image is not kept:
// Dropped then says why, in words the model reads.
type Image struct {
	MediaType string
	Size      int // decoded bytes
	Data      []byte
	Dropped   string
}

// Describe is the line the model reads in place of an image; where names
// where it was kept ("" when it was not).
func (im Image) Describe(where string) string {
	kind := im.MediaType
	if kind == "" {
		kind = "unknown type"
	}
	s := fmt.Sprintf("[image: %s, %s", kind, HumanBytes(im.Size))
	switch {
	case im.Data == nil && im.Dropped != "":
		s += "; not kept: " + im.Dropped
	case where != "":
		s += "; kept as " + where
	default:
		s += "; not kept"
	}
	return s + "]"
}

// Withhold drops the image's bytes when they hold a value of red in any form
// the redactor knows (raw, or in the base64 text the tool sent): pixels cannot
// be redacted, so such an image is neither stored nor shown.
func (im *Image) Withhold(red *Redactor, encoded string) {
	if im.Data == nil || red == nil {
		return
	}
	raw := string(im.Data)
	if red.Redact(raw) != raw || (encoded != "" && red.Redact(encoded) != encoded) {
		im.Data, im.Dropped = nil, "it holds a credential value"
	}
}

// JoinParts is the text of parts with each image described; where gives the
// place the i-th image (counting images only, from 1) was kept.
func JoinParts(parts []Part, where func(i int, im Image) string) string {
	var b strings.Builder
	n := 0
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		if p.App != nil {
			b.WriteString(p.App.Describe())
			continue
		}
		if p.Image == nil {
			b.WriteString(p.Text)
			continue
		}
		n++
		w := ""
		if where != nil && p.Image.Data != nil {
			w = where(n, *p.Image)
		}
		b.WriteString(p.Image.Describe(w))
	}
	return b.String()
}

// HumanBytes writes n as B, KiB or MiB with one decimal.
func HumanBytes(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
