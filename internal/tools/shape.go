package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// OmitHint is the line added to an optional string property so the model
// leaves the key out instead of sending an empty or invented value.
const OmitHint = "Omit this key when unused."

// Shape returns the model-facing form of a tool's argument schema, the
// warnings for the repairs it made, or an error when the schema cannot be
// offered at all (the caller then leaves the tool out of the run).
//
// Shaping never changes schema: the original stays the one arguments are
// validated against. The rules, and what "optional" and "nullable" mean, are
// in docs/adr/0101-schema-shaping-optional-nullable.md. In short:
//   - "format" is removed from optional and nullable values, at every depth;
//   - "additionalProperties": false (and "unevaluatedProperties": false) is removed;
//   - an optional string property gets [OmitHint] unless its description already says "omit";
//   - "$schema", "$comment" and a root "$id" nobody needs are removed;
//   - an array without "items" gets "items": {};
//   - the root becomes a plain object schema: a missing type becomes "object",
//     root combinators are flattened into one object, and a root that is not an
//     object (a string, an array, false) is refused.
//
// Shaping is idempotent: Shape of a shaped schema returns it unchanged.
func Shape(schema json.RawMessage) (json.RawMessage, []string, error) {
	if _, err := CompileSchema(schema); err != nil {
		return nil, nil, err
	}
	return shapeCompiled(schema)
}

// Offer is a tool as a run offers it: the original schema (and its compiled
// form) for argument checks, the shaped schema for the model.
type Offer struct {
	Name        string
	Description string
	Schema      json.RawMessage // original, what arguments are validated against
	Shaped      json.RawMessage // what the model sees; filled by ShapeAll
	Validator   *Schema         // compiled Schema; filled by ShapeAll
}

// ShapeAll shapes the schemas of the tools a run is about to offer. A tool
// whose name is not a valid model-facing name, whose schema does not compile,
// or whose schema cannot be shaped is left out, with a warning naming it; the
// other tools keep their order.
func ShapeAll(offers []Offer) (shaped []Offer, warnings []string) {
	shaped = make([]Offer, 0, len(offers))
	seen := make(map[string]bool, len(offers))
	for _, o := range offers {
		if !ValidName(o.Name) {
			warnings = append(warnings, fmt.Sprintf("tool %q left out: not a valid tool name", truncateUTF8(o.Name, maxNameInRefusal)))
			continue
		}
		if seen[o.Name] {
			warnings = append(warnings, fmt.Sprintf("tool %q left out: duplicate name", o.Name))
			continue
		}
		v, err := CompileSchema(o.Schema)
		if err == nil {
			var ws []string
			o.Shaped, ws, err = shapeCompiled(o.Schema)
			for _, w := range ws {
				warnings = append(warnings, fmt.Sprintf("tool %q: %s", o.Name, w))
			}
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("tool %q left out: %v", o.Name, err))
			continue
		}
		seen[o.Name] = true
		o.Validator = v
		shaped = append(shaped, o)
	}
	return shaped, warnings
}

// shapeCompiled shapes a schema already known to compile.
func shapeCompiled(schema json.RawMessage) (json.RawMessage, []string, error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, nil, err
	}
	lookup, _ := decodeJSON(schema) // an untouched copy for $ref resolution
	sh := &shaper{lookup: lookup}
	root, err := sh.root(doc)
	if err != nil {
		return nil, nil, err
	}
	out, err := encodeJSON(root)
	if err != nil {
		return nil, nil, err
	}
	if _, err := CompileSchema(out); err != nil {
		// Without "$schema" the document is read as draft 2020-12; an older
		// draft's forms (a tuple "items" array, boolean exclusiveMaximum)
		// then mean something else. Keep the declared draft in that case.
		orig, _ := lookup.(map[string]any)
		decl, ok := orig["$schema"]
		rm, isMap := root.(map[string]any)
		if !ok || !isMap {
			return nil, nil, fmt.Errorf("shaped schema does not compile: %w", err)
		}
		rm["$schema"] = decl
		if out, err = encodeJSON(rm); err != nil {
			return nil, nil, err
		}
		if _, err := CompileSchema(out); err != nil {
			return nil, nil, fmt.Errorf("shaped schema does not compile: %w", err)
		}
		sh.warn("$schema kept: the schema relies on its draft")
	}
	return out, sh.warnings, nil
}

type shaper struct {
	lookup   any // the original document, never modified
	warnings []string
	// looseRefs holds the local references met at loose sites; loosened,
	// those whose definitions have been shaped as loose since.
	looseRefs, loosened map[string]bool
}

func (sh *shaper) warn(format string, args ...any) {
	sh.warnings = append(sh.warnings, fmt.Sprintf(format, args...))
}

var errNotObject = errors.New("schema cannot be offered: the arguments must be an object")

// root makes the document a plain object schema, then shapes it.
func (sh *shaper) root(doc any) (any, error) {
	switch d := doc.(type) {
	case bool:
		if !d {
			return nil, fmt.Errorf("%w: the schema is false and accepts no call", errNotObject)
		}
		sh.warn("schema true offered as an object with no declared properties")
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	case map[string]any:
		if err := sh.rootObject(d); err != nil {
			return nil, err
		}
		sh.node(d, "", false)
		sh.loosenSharedDefinitions(d)
		if _, ok := d["$id"]; ok && !hasExternalRef(d) {
			delete(d, "$id")
		}
		return d, nil
	default:
		return nil, fmt.Errorf("%w: the schema is a JSON %s", errNotObject, jsonKind(doc))
	}
}

func (sh *shaper) rootObject(m map[string]any) error {
	switch t := m["type"].(type) {
	case nil:
		m["type"] = "object"
	case string:
		if t != "object" {
			return fmt.Errorf("%w: the root type is %q", errNotObject, t)
		}
	case []any:
		if !containsString(t, "object") {
			return fmt.Errorf("%w: the root type is %s", errNotObject, mustEncode(t))
		}
		m["type"] = "object"
		sh.warn("root type %s narrowed to \"object\"", mustEncode(t))
	default:
		return fmt.Errorf("%w: the root type is not a string", errNotObject)
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		m["properties"] = props
	}
	required := requiredSet(m)
	// Strict providers refuse combinators and value constraints at the root.
	// Flatten them into one object the model can fill; the original schema
	// still validates the call, so nothing it forbids gets through.
	if b, ok := m["allOf"].([]any); ok {
		for _, br := range b {
			bp, breq := sh.branchProps(br)
			mergeProps(props, bp)
			for k := range breq {
				required[k] = true
			}
		}
		delete(m, "allOf")
		sh.warn("root allOf merged into one object; calls are still validated against it")
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		b, ok := m[kw].([]any)
		if !ok {
			continue
		}
		var common map[string]bool
		for i, br := range b {
			bp, breq := sh.branchProps(br)
			mergeProps(props, bp)
			if i == 0 {
				common = breq
				continue
			}
			for k := range common {
				if !breq[k] {
					delete(common, k)
				}
			}
		}
		for k := range common {
			required[k] = true
		}
		delete(m, kw)
		sh.warn("root %s flattened into one object; calls are still validated against it", kw)
	}
	for _, kw := range []string{"not", "if", "then", "else", "enum", "const"} {
		if _, ok := m[kw]; ok {
			delete(m, kw)
			sh.warn("root %s removed; calls are still validated against it", kw)
		}
	}
	if _, had := m["required"]; had || len(required) > 0 {
		list := make([]any, 0, len(required))
		for _, k := range sortedKeys(required) {
			list = append(list, k)
		}
		m["required"] = list
	}
	return nil
}

// branchProps returns a deep copy of the properties and the required set of a
// root combinator branch, following a local $ref.
func (sh *shaper) branchProps(br any) (map[string]any, map[string]bool) {
	m, _ := br.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		m, _ = resolveRef(sh.lookup, ref).(map[string]any)
	}
	if m == nil {
		return nil, map[string]bool{}
	}
	props, _ := deepCopy(m["properties"]).(map[string]any)
	return props, requiredSet(m)
}

func mergeProps(dst, src map[string]any) {
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
}

// loosenSharedDefinitions shapes again, as loose, every definition a loose
// site refers to: a model filling an optional field through a $ref must not
// see the definition's format either. Its required sites lose that format
// hint too, which only relaxes what the model is shown; calls are still
// validated against the original. Shaping a definition can reach others, so
// this runs until no new reference turns up.
func (sh *shaper) loosenSharedDefinitions(doc map[string]any) {
	for {
		var next string
		for _, ref := range sortedKeys(sh.looseRefs) {
			if !sh.loosened[ref] {
				next = ref
				break
			}
		}
		if next == "" {
			return
		}
		if sh.loosened == nil {
			sh.loosened = map[string]bool{}
		}
		sh.loosened[next] = true
		sh.node(resolveRef(doc, next), next[1:], true)
	}
}

// node shapes the schema v in place. optional says whether the value it
// describes may be absent: an optional property, or a branch of one.
func (sh *shaper) node(v any, path string, optional bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return // boolean schemas have nothing to shape
	}
	delete(m, "$schema")
	delete(m, "$comment")
	loose := optional || isNullable(m)
	if loose {
		delete(m, "format")
		if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
			if sh.looseRefs == nil {
				sh.looseRefs = map[string]bool{}
			}
			sh.looseRefs[ref] = true
		}
	}
	for _, kw := range []string{"additionalProperties", "unevaluatedProperties"} {
		if b, ok := m[kw].(bool); ok && !b {
			delete(m, kw)
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		sh.node(ap, path+"/additionalProperties", true)
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for _, k := range sortedKeys(pp) {
			sh.node(pp[k], path+"/patternProperties/"+escapePointer(k), true)
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		required := requiredSet(m)
		for _, k := range sortedKeys(props) {
			opt := !required[k]
			sh.node(props[k], path+"/properties/"+escapePointer(k), opt)
			if p, ok := props[k].(map[string]any); ok && opt && sh.isString(p, 0) {
				addOmitHint(p)
			}
		}
	}
	switch it := m["items"].(type) {
	case map[string]any:
		sh.node(it, path+"/items", false)
	case []any: // draft-07 tuples
		for i, s := range it {
			sh.node(s, fmt.Sprintf("%s/items/%d", path, i), false)
		}
	}
	if pi, ok := m["prefixItems"].([]any); ok {
		for i, s := range pi {
			sh.node(s, fmt.Sprintf("%s/prefixItems/%d", path, i), false)
		}
	}
	if ai, ok := m["additionalItems"].(map[string]any); ok {
		sh.node(ai, path+"/additionalItems", false)
	}
	if _, hasItems := m["items"]; !hasItems && hasType(m, "array") {
		if _, tuple := m["prefixItems"]; !tuple {
			m["items"] = map[string]any{}
			sh.warn("array at %s had no items; offered with \"items\": {}", pointerOrRoot(path))
		}
	}
	// Branches describe the same value as their holder, so they inherit its
	// looseness. "not", "if", "contains" and "propertyNames" are left alone:
	// loosening a schema under "not" or "if" would change what is valid.
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if b, ok := m[kw].([]any); ok {
			for i, s := range b {
				sh.node(s, fmt.Sprintf("%s/%s/%d", path, kw, i), loose)
			}
		}
	}
	for _, kw := range []string{"then", "else"} {
		if s, ok := m[kw]; ok {
			sh.node(s, path+"/"+kw, loose)
		}
	}
	if ds, ok := m["dependentSchemas"].(map[string]any); ok {
		for _, k := range sortedKeys(ds) {
			sh.node(ds[k], path+"/dependentSchemas/"+escapePointer(k), loose)
		}
	}
	// Shared definitions are shaped as required values here; those a loose
	// site refers to are loosened afterwards (loosenSharedDefinitions).
	for _, kw := range []string{"$defs", "definitions"} {
		if defs, ok := m[kw].(map[string]any); ok {
			for _, k := range sortedKeys(defs) {
				sh.node(defs[k], path+"/"+kw+"/"+escapePointer(k), false)
			}
		}
	}
}

// isNullable reports whether the schema admits null as a value.
func isNullable(m map[string]any) bool {
	if n, ok := m["nullable"].(bool); ok && n {
		return true
	}
	switch t := m["type"].(type) {
	case string:
		if t == "null" {
			return true
		}
	case []any:
		if containsString(t, "null") {
			return true
		}
	}
	if e, ok := m["enum"].([]any); ok {
		for _, x := range e {
			if x == nil {
				return true
			}
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if b, ok := m[kw].([]any); ok {
			for _, s := range b {
				if bm, ok := s.(map[string]any); ok && isNullOnly(bm) {
					return true
				}
			}
		}
	}
	return false
}

// isNullOnly reports whether the schema is a null branch: {"type":"null"},
// {"const":null} or {"enum":[null]}.
func isNullOnly(m map[string]any) bool {
	if t, ok := m["type"].(string); ok && t == "null" {
		return true
	}
	if c, ok := m["const"]; ok && c == nil {
		return true
	}
	if e, ok := m["enum"].([]any); ok && len(e) == 1 && e[0] == nil {
		return true
	}
	return false
}

// maxRefDepth bounds $ref chains followed when deciding if a property is a string.
const maxRefDepth = 8

// isString reports whether every non-null value the schema admits is a string.
func (sh *shaper) isString(m map[string]any, depth int) bool {
	if depth > maxRefDepth {
		return false
	}
	switch t := m["type"].(type) {
	case string:
		return t == "string"
	case []any:
		n := 0
		for _, x := range t {
			if x == "string" {
				n++
			} else if x != "null" {
				return false
			}
		}
		return n > 0
	}
	if ref, ok := m["$ref"].(string); ok {
		if target, ok := resolveRef(sh.lookup, ref).(map[string]any); ok {
			return sh.isString(target, depth+1)
		}
		return false
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		for _, x := range e {
			if _, s := x.(string); !s && x != nil {
				return false
			}
		}
		return true
	}
	if _, ok := m["const"].(string); ok {
		return true
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if b, ok := m[kw].([]any); ok && len(b) > 0 {
			n := 0
			for _, s := range b {
				bm, ok := s.(map[string]any)
				if !ok {
					return false
				}
				if isNullOnly(bm) {
					continue
				}
				if !sh.isString(bm, depth+1) {
					return false
				}
				n++
			}
			return n > 0
		}
	}
	return false
}

// addOmitHint appends OmitHint unless the description already says to omit.
func addOmitHint(p map[string]any) {
	d, _ := p["description"].(string)
	if strings.Contains(strings.ToLower(d), "omit") {
		return
	}
	d = strings.TrimRightFunc(d, unicode.IsSpace)
	switch {
	case d == "":
		d = OmitHint
	case strings.HasSuffix(d, ".") || strings.HasSuffix(d, "!") || strings.HasSuffix(d, "?"):
		d += " " + OmitHint
	default:
		d += ". " + OmitHint
	}
	p["description"] = d
}

// resolveRef follows a local reference ("#", "#/$defs/x") in doc.
func resolveRef(doc any, ref string) any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	ptr := ref[1:]
	if ptr == "" {
		return doc
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil // an anchor; not followed
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// hasExternalRef reports whether any $ref in v points outside the document,
// in which case a root $id is its base URI and must stay.
func hasExternalRef(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok && (k == "$ref" || k == "$dynamicRef") && !strings.HasPrefix(s, "#") {
				return true
			}
			if hasExternalRef(x) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if hasExternalRef(x) {
				return true
			}
		}
	}
	return false
}

func requiredSet(m map[string]any) map[string]bool {
	set := map[string]bool{}
	if r, ok := m["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				set[s] = true
			}
		}
	}
	return set
}

func hasType(m map[string]any, want string) bool {
	switch t := m["type"].(type) {
	case string:
		return t == want
	case []any:
		return containsString(t, want)
	}
	return false
}

func containsString(list []any, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func pointerOrRoot(p string) string {
	if p == "" {
		return "the root"
	}
	return p
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(t))
		for k, x := range t {
			c[k] = deepCopy(x)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, x := range t {
			c[i] = deepCopy(x)
		}
		return c
	}
	return v
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// decodeJSON decodes one JSON value, keeping numbers exact.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not JSON: data after the value")
	}
	return v, nil
}

// encodeJSON encodes v compactly without escaping <, > and &.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func mustEncode(v any) string {
	b, _ := encodeJSON(v)
	return string(b)
}
