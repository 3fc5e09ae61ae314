package connections

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/validation"
)

// KeyFields are the fields a token row's key connect takes instead of one
// key (catalog.Config.KeyFields); none means one key.
func KeyFields(config json.RawMessage) []catalog.KeyField {
	c, _ := catalog.ParseConfig(config) // lenient: a bad config takes one key
	return c.KeyFields
}

// CheckKeyFields is the multi-field key shape: every required field is
// there, no other is, and each value is long enough to be redacted (every
// value joins the login's redaction set). Values are trimmed; an optional
// field left blank is dropped. Each problem names its field
// ("values.<name>") and never holds the value.
func CheckKeyFields(slug string, fields []catalog.KeyField, values map[string]string) (map[string]string, error) {
	var probs validation.Problems
	known := map[string]bool{}
	out := map[string]string{}
	for _, f := range fields {
		known[f.Name] = true
		v := strings.TrimSpace(values[f.Name])
		switch {
		case v == "" && f.Optional:
		case v == "":
			probs.Add("values."+f.Name, "%s", "is required for "+slug+" ("+label(f)+")")
		case tools.CheckRedactable(v) != nil:
			probs.Add("values."+f.Name, "%s", tools.CheckRedactable(v).Error())
		default:
			out[f.Name] = v
		}
	}
	var unknown []string
	for k := range values {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		probs.Add("values."+k, "%s", "is not a field of "+slug+"; it takes "+fieldNames(fields))
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func label(f catalog.KeyField) string {
	if f.Label != "" {
		return f.Label
	}
	return f.Name
}

func fieldNames(fields []catalog.KeyField) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
		if f.Optional {
			names[i] += " (optional)"
		}
	}
	return strings.Join(names, ", ")
}
