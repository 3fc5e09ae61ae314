package codegraph

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// OutlineArgs are code_outline's arguments.
type OutlineArgs struct {
	Path string `json:"path"`
}

// Outline lists every definition of one file with its line span and
// signature, nested by indentation, without bodies.
func Outline(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a OutlineArgs
	if err := decode(raw, &a); err != nil {
		return errorf("%v", err)
	}
	if strings.TrimSpace(a.Path) == "" {
		return errorf("path: is required (the file to outline)")
	}
	t, err := env.byPath("path", a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	if st, err := os.Stat(t.fs); err != nil || st.IsDir() {
		return errorf("path: %s is a folder; code_outline takes a file (code_map shows a repository)", a.Path)
	}
	if r, ok := env.unparsedFile(t); ok {
		return r
	}
	shown := env.rel(t.fs)
	meta := map[string]any{"repository": t.name, "path": shown}
	g, err := env.open(ctx, t)
	if err != nil {
		return errorf("code graph of %s: %v", t.name, err)
	}
	f := g.byPath[t.scope]
	if f == nil {
		// An ignored file is not in the graph; outline it all the same.
		f, err = parseOne(t.fs, t.scope)
		if err != nil {
			return errorf("path: %s: %v", a.Path, err)
		}
	}
	if f.Lang == "" {
		meta["hits"] = 0
		return Result{Text: fmt.Sprintf("%s: not in the code graph (%s); file_read reads it.", shown, f.Skipped), Meta: meta}
	}
	out := newLines(env.maxBytes(), "; file_read reads the rest of the file")
	out.add("%s · %s · %s", shown, f.Lang, plural(len(f.Defs), "definition", "definitions"))
	if f.Skipped != "" {
		out.add("(%s)", f.Skipped)
	}
	width := 0
	for i := range f.Defs {
		if w := len(span(&f.Defs[i])); w > width {
			width = w
		}
	}
	for i := range f.Defs {
		d := &f.Defs[i]
		depth := 0
		for p := d.Parent; p >= 0; p = f.Defs[p].Parent {
			depth++
		}
		out.add("%-*s  %s%s", width, span(d), strings.Repeat("  ", depth), d.Sig)
	}
	meta["hits"] = len(f.Defs)
	return Result{Text: out.String(), Meta: meta}
}

// parseOne parses a file outside the graph (ignored by git, say).
func parseOne(fsPath, rel string) (*File, error) {
	src, err := os.ReadFile(fsPath) //nolint:gosec // G304: confined to the workspace by Env.resolve
	if err != nil {
		return nil, err
	}
	f := &File{Path: filepath.ToSlash(rel), Lang: languageOf(rel)}
	if len(src) > maxParseBytes {
		return &File{Path: f.Path, Skipped: "larger than 2 MiB"}, nil
	}
	p := newParser()
	defer p.close()
	if err := p.parse(f, src); err != nil {
		return nil, err
	}
	return f, nil
}

// decode reads a tool's arguments, naming the field a value does not fit.
func decode(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
			want := te.Type.String()
			switch te.Type.Kind() {
			case reflect.String:
				want = "a string"
			case reflect.Int, reflect.Int64, reflect.Float64:
				want = "a number"
			case reflect.Bool:
				want = "true or false"
			}
			return fmt.Errorf("%s: must be %s, not %s", te.Field, want, te.Value)
		}
		return fmt.Errorf("arguments: %v", err)
	}
	return nil
}
