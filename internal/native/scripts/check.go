package scripts

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/native/scripts/runproto"
	"github.com/guilds/guilds/internal/tools"
)

// Limits of a script.
const (
	// MaxDescription bounds a description, in characters.
	MaxDescription = 400
	// MaxSource bounds a script's source, in bytes: below the result cap,
	// so script_read returns a whole script.
	MaxSource = 60_000
	// MaxParameters bounds the parameters schema, in bytes.
	MaxParameters = 16 << 10
	// DefaultMaxScripts is max_scripts when the agent's config has none.
	DefaultMaxScripts = 10
)

// Reserved is the name no script may take.
const Reserved = "manifest"

// Input is what script_create takes.
type Input struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Source      string          `json:"source"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// CheckName refuses a name that cannot name a script.
func CheckName(name string) error {
	switch {
	case name == "":
		return artifacts.OnField("name", "name is required: lowercase letters, digits, '_' and '-', starting with a letter, e.g. fetch_rates")
	case !runproto.Name.MatchString(name):
		return artifacts.OnField("name", "name %q must match %s (lowercase letters, digits, '_' and '-', starting with a letter, at most 63 characters)",
			clip(name), runproto.Name)
	case name == Reserved:
		return artifacts.OnField("name", "name %q is reserved", name)
	}
	return nil
}

// Check refuses an input that breaks a rule, naming the field. Parameters
// come back compacted, or nil when the script has none.
func (in *Input) Check() error {
	if err := CheckName(in.Name); err != nil {
		return err
	}
	desc := strings.TrimSpace(in.Description)
	switch n := utf8.RuneCountInString(desc); {
	case desc == "":
		return artifacts.OnField("description", "description is required: one line saying what the script does")
	case n > MaxDescription:
		return artifacts.OnField("description", "description is %d characters; at most %d", n, MaxDescription)
	}
	in.Description = desc
	switch {
	case strings.TrimSpace(in.Source) == "":
		return artifacts.OnField("source", "source is required: the Python program")
	case len(in.Source) > MaxSource:
		return artifacts.OnField("source", "source is %d bytes; at most %d", len(in.Source), MaxSource)
	case !utf8.ValidString(in.Source):
		return artifacts.OnField("source", "source must be UTF-8 text")
	case strings.ContainsRune(in.Source, 0):
		return artifacts.OnField("source", "source may not contain a NUL byte")
	}
	params, err := CheckParameters(in.Parameters)
	if err != nil {
		return err
	}
	in.Parameters = params
	return nil
}

// CheckParameters refuses a parameters schema that could not describe a
// tool's arguments: it must be a JSON Schema of an object that compiles
// and can be offered to a model. Absent or null is no schema (nil).
func CheckParameters(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if len(raw) > MaxParameters {
		return nil, artifacts.OnField("parameters", "parameters is %d bytes; at most %d", len(raw), MaxParameters)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, artifacts.OnField("parameters", "parameters must be a JSON Schema object: %v", err)
	}
	if t := strings.TrimSpace(string(top["type"])); t != `"object"` {
		return nil, artifacts.OnField("parameters", `parameters must be a schema of "type": "object" (the arguments object the script reads from stdin)`)
	}
	if _, err := tools.CompileSchema(raw); err != nil {
		return nil, artifacts.OnField("parameters", "parameters is not a usable JSON Schema: %v", err)
	}
	if _, _, err := tools.Shape(raw); err != nil {
		return nil, artifacts.OnField("parameters", "parameters cannot be offered to a model: %v", err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, artifacts.OnField("parameters", "parameters: %v", err)
	}
	return b.Bytes(), nil
}

func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	return strings.ToValidUTF8(s[:80], "") + "…"
}
