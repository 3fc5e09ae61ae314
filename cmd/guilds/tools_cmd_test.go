package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runTools(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := toolsCommand(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestToolsShapeSchema(t *testing.T) {
	schema := `{"type":"object","additionalProperties":false,"properties":{"d":{"type":"string","format":"date"}}}`
	code, out, _ := runTools(t, schema, "shape-schema")
	want := `{"properties":{"d":{"description":"Omit this key when unused.","type":"string"}},"type":"object"}` + "\n"
	if code != 0 || out != want {
		t.Fatalf("stdin: code %d, out %q", code, out)
	}
	f := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(f, []byte(schema), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runTools(t, "", "shape-schema", f); code != 0 || out != want {
		t.Fatalf("file: code %d, out %q", code, out)
	}
	code, _, errOut := runTools(t, `{"type":"array"}`, "shape-schema")
	if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "must be an object") {
		t.Fatalf("bad schema: code %d, stderr %q", code, errOut)
	}
	if code, _, _ := runTools(t, "{", "shape-schema"); code != 2 {
		t.Fatalf("not JSON: code %d", code)
	}
	if code, _, _ := runTools(t, "", "shape-schema", filepath.Join(t.TempDir(), "missing")); code != 2 {
		t.Fatalf("missing file: code %d", code)
	}
}

func TestToolsStamp(t *testing.T) {
	secrets := filepath.Join(t.TempDir(), "secrets")
	if err := os.WriteFile(secrets, []byte("sk-live-0123456789\r\n\npin1234\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runTools(t, "key sk-live-0123456789 end", "stamp", "--remaining", "12", "--secrets-file", secrets)
	if code != 0 || out != "key [REDACTED] end\n\nremaining_tool_calls: 12\n" {
		t.Fatalf("code %d, out %q, stderr %q", code, out, errOut)
	}
	if strings.Contains(errOut, "pin1234") {
		t.Fatal("a secret value reached stderr")
	}
	code, out, _ = runTools(t, strings.Repeat("x", 1000), "stamp", "--remaining", "2", "--cap", "200")
	if code != 0 || !strings.Contains(out, "bytes elided") || !strings.HasSuffix(out, "remaining_tool_calls: 2\n") {
		t.Fatalf("cap: code %d, out %q", code, out)
	}
	for _, args := range [][]string{
		{"stamp"},
		{"stamp", "--remaining", "-1"},
		{"stamp", "--remaining", "x"},
		{"stamp", "--remaining", "1", "--cap", "10"},
		{"stamp", "--remaining", "1", "--secrets-file", filepath.Join(t.TempDir(), "none")},
		{"stamp", "--remaining", "1", "extra"},
		{"frobnicate"},
		{},
	} {
		code, _, errOut := runTools(t, "x", args...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
}
