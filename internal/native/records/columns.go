package records

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/validation"
)

// Type is a column type.
type Type string

// Column types.
const (
	TypeText      Type = "text"
	TypeNumber    Type = "number"
	TypeDatetime  Type = "datetime"
	TypeBoolean   Type = "boolean"
	TypeID        Type = "id"
	TypeEnum      Type = "enum"       // one of Values
	TypeTextArray Type = "text_array" // a list of open text values
	TypeEnumArray Type = "enum_array" // a list drawn from Values
)

var types = []Type{TypeText, TypeNumber, TypeDatetime, TypeBoolean, TypeID, TypeEnum, TypeTextArray, TypeEnumArray}

// IsArray reports whether values of t are lists.
func (t Type) IsArray() bool { return t == TypeTextArray || t == TypeEnumArray }

func (t Type) hasValues() bool { return t == TypeEnum || t == TypeEnumArray }

// Column is one declared column of a collection.
type Column struct {
	Name        string   `json:"name"`
	Type        Type     `json:"type"`
	Required    bool     `json:"required,omitempty"`
	Unique      bool     `json:"unique,omitempty"`
	Values      []string `json:"values,omitempty"` // enum and enum_array only
	Description string   `json:"description,omitempty"`
}

// Limits on columns and values.
const (
	MaxColumns    = 64
	MaxEnumValues = 200
	MaxTextBytes  = 20_000
	MaxItems      = 200
	MaxItemBytes  = 1_000
	MaxIDBytes    = 200
)

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// reserved names are the fields every record already has.
var reserved = []string{"id", "collection", "created_at", "updated_at", "deleted_at"}

// CheckColumns validates a column list, adding every problem to probs.
func CheckColumns(probs *validation.Problems, cols []Column) {
	if len(cols) > MaxColumns {
		probs.Add("columns", "at most %d columns", MaxColumns)
	}
	seen := map[string]bool{}
	uniques := 0
	for i, c := range cols {
		f := fmt.Sprintf("columns[%d]", i)
		switch {
		case !namePattern.MatchString(c.Name):
			probs.Add(f+".name", "must start with a lower-case letter and hold only lower-case letters, digits and _ (at most 63 characters), like email or due_date")
		case slices.Contains(reserved, c.Name):
			probs.Add(f+".name", "%q is reserved", c.Name)
		case seen[c.Name]:
			probs.Add(f+".name", "%q is declared twice", c.Name)
		}
		seen[c.Name] = true
		if !slices.Contains(types, c.Type) {
			probs.Add(f+".type", "must be one of text, number, datetime, boolean, id, enum, text_array, enum_array")
		}
		if c.Type.hasValues() {
			if len(c.Values) == 0 || len(c.Values) > MaxEnumValues {
				probs.Add(f+".values", "an %s column needs 1 to %d values", c.Type, MaxEnumValues)
			}
			vs := map[string]bool{}
			for _, v := range c.Values {
				if strings.TrimSpace(v) == "" || len(v) > MaxItemBytes || vs[v] {
					probs.Add(f+".values", "values must be distinct, non-empty and at most %d bytes", MaxItemBytes)
					break
				}
				vs[v] = true
			}
		} else if len(c.Values) > 0 {
			probs.Add(f+".values", "only enum and enum_array columns take values")
		}
		if c.Unique {
			uniques++
			if c.Type.IsArray() || c.Type == TypeBoolean {
				probs.Add(f+".unique", "a %s column cannot be unique", c.Type)
			}
		}
		if len(c.Description) > 1000 {
			probs.Add(f+".description", "must be at most 1000 bytes")
		}
	}
	if uniques > 1 {
		probs.Add("columns", "at most one column may be unique")
	}
}

// column finds a declared column.
func column(cols []Column, name string) (Column, bool) {
	for _, c := range cols {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// normalize checks one value against its column and returns its stored form.
// A problem is returned as a message; raw is never JSON null here.
func normalize(c Column, raw json.RawMessage) (any, string) {
	switch c.Type {
	case TypeText, TypeID, TypeEnum:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, "must be a string"
		}
		switch c.Type {
		case TypeText:
			if len(s) > MaxTextBytes {
				return nil, fmt.Sprintf("must be at most %d bytes", MaxTextBytes)
			}
		case TypeID:
			s = strings.TrimSpace(s)
			if s == "" || len(s) > MaxIDBytes {
				return nil, fmt.Sprintf("must be a non-empty id of at most %d bytes", MaxIDBytes)
			}
		case TypeEnum:
			if !slices.Contains(c.Values, s) {
				return nil, "must be one of " + quoteList(c.Values)
			}
		}
		if !utf8.ValidString(s) {
			return nil, "must be valid UTF-8"
		}
		return s, ""
	case TypeNumber:
		var n json.Number
		if json.Unmarshal(raw, &n) != nil || !strings.ContainsAny(string(raw[:1]), "-0123456789") {
			return nil, "must be a number"
		}
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, "must be a finite number"
		}
		return n, ""
	case TypeDatetime:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, "must be an ISO 8601 timestamp string, e.g. 2025-01-31T09:00:00Z"
		}
		t, ok := ParseTime(s)
		if !ok {
			return nil, "must be an ISO 8601 timestamp, e.g. 2025-01-31T09:00:00Z or 2025-01-31"
		}
		return FormatTime(t), ""
	case TypeBoolean:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, "must be true or false"
		}
		return b, ""
	case TypeTextArray, TypeEnumArray:
		var items []string
		if json.Unmarshal(raw, &items) != nil {
			return nil, "must be an array of strings"
		}
		if len(items) > MaxItems {
			return nil, fmt.Sprintf("must hold at most %d items", MaxItems)
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			if len(it) > MaxItemBytes || !utf8.ValidString(it) {
				return nil, fmt.Sprintf("items must be valid text of at most %d bytes", MaxItemBytes)
			}
			if c.Type == TypeEnumArray {
				if !slices.Contains(c.Values, it) {
					return nil, fmt.Sprintf("item %q must be one of %s", it, quoteList(c.Values))
				}
				if slices.Contains(out, it) {
					continue
				}
			}
			out = append(out, it)
		}
		return out, ""
	}
	return nil, "has an unknown column type"
}

// ParseTime reads an RFC 3339 timestamp or a plain date (midnight UTC).
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// FormatTime is the stored form of a datetime value: UTC RFC 3339.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// uniqueKey is the value the unique index compares: text case-folded and
// trimmed, anything else in its stored JSON form.
func uniqueKey(c Column, v any) string {
	if s, ok := v.(string); ok && c.Type == TypeText {
		return strings.ToLower(strings.TrimSpace(s))
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// searchText is every searchable value of a record, one per line, in column order.
func searchText(cols []Column, data map[string]any) string {
	var b strings.Builder
	for _, c := range cols {
		v, ok := data[c.Name]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []string:
			for _, it := range x {
				b.WriteString(it)
				b.WriteByte('\n')
			}
		case []any:
			for _, it := range x {
				if s, ok := it.(string); ok {
					b.WriteString(s)
					b.WriteByte('\n')
				}
			}
		case json.Number:
			b.WriteString(x.String())
			b.WriteByte('\n')
		case float64:
			b.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
			b.WriteByte('\n')
		}
	}
	return b.String()
}
