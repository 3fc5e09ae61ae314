package adapters

import (
	"fmt"
	"strconv"
	"strings"
)

// Row counts of list tools: DefaultRows unless the model asks for more, never
// more than MaxRows. Chart-like series are cut to SeriesPoints.
const (
	DefaultRows  = 15
	MaxRows      = 30
	SeriesPoints = 48
)

// Table builds the compact TSV adapters answer with: a header line, then one
// line per row, cells cleaned of tabs and line breaks. Models read it well
// and it costs a fraction of the service's JSON.
type Table struct {
	b    strings.Builder
	cols int
}

// NewTable starts a table with its column names.
func NewTable(cols ...string) *Table {
	t := &Table{cols: len(cols)}
	t.line(cols)
	return t
}

// Add appends a row; cells are formatted with Cell.
func (t *Table) Add(cells ...any) {
	s := make([]string, len(cells))
	for i, c := range cells {
		s[i] = Cell(c)
	}
	t.line(s)
}

func (t *Table) line(cells []string) {
	for i, c := range cells {
		if i > 0 {
			t.b.WriteByte('\t')
		}
		t.b.WriteString(cleanCell(c))
	}
	t.b.WriteByte('\n')
}

// String is the TSV text.
func (t *Table) String() string { return t.b.String() }

// Cell formats one value: numbers without exponent noise, nil as empty.
func Cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case *string:
		if x == nil {
			return ""
		}
		return *x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case *float64:
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

var cellCleaner = strings.NewReplacer("\t", " ", "\r\n", " ", "\n", " ", "\r", " ")

func cleanCell(s string) string { return cellCleaner.Replace(s) }

// Rows is the number of rows to return for a requested limit (0 or less:
// DefaultRows), capped at MaxRows.
func Rows(requested int) int {
	switch {
	case requested <= 0:
		return DefaultRows
	case requested > MaxRows:
		return MaxRows
	}
	return requested
}

// Downsample keeps at most n evenly spaced items of xs, always the last one.
func Downsample[T any](xs []T, n int) []T {
	if n <= 0 || len(xs) <= n {
		return xs
	}
	out := make([]T, 0, n)
	step := float64(len(xs)-1) / float64(n-1)
	for i := 0; i < n; i++ {
		out = append(out, xs[int(float64(i)*step+0.5)])
	}
	return out
}

// Clip keeps the first n characters (runes) of s, marking a cut with "…".
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
