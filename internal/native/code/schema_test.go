package code

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/tools"
)

func registry(d Deps) *tools.Registry {
	reg := tools.NewRegistry()
	Register(reg, d)
	return reg
}

func TestElevenToolsWithTheirClasses(t *testing.T) {
	reg := registry(Deps{})
	if len(reg.All()) != 11 || len(Names) != 11 {
		t.Fatalf("registered %d tools, Names has %d", len(reg.All()), len(Names))
	}
	for _, n := range Names {
		tl, ok := reg.Lookup(n)
		if !ok {
			t.Fatalf("%s not registered", n)
		}
		want := tools.ClassCode
		if n == ToolShell {
			want = tools.ClassShell
		}
		if tl.Class != want {
			t.Errorf("%s: class %s, want %s", n, tl.Class, want)
		}
		if _, ok := ExecTimeout(n, []byte(`{}`)); !ok {
			t.Errorf("%s has no helper timeout", n)
		}
	}
}

// Every refused argument names its field, and nothing reaches a workspace.
func TestBadArgumentsNameTheirField(t *testing.T) {
	reg := registry(Deps{})
	for _, c := range []struct{ tool, args, field string }{
		{ToolShell, `{}`, "command"},
		{ToolShell, `{"command":"x","timeout_seconds":601}`, "/timeout_seconds"},
		{ToolShell, `{"command":"x","timeout_seconds":0}`, "/timeout_seconds"},
		{ToolShell, `{"command":"x","cwd":"/"}`, "cwd"},
		{ToolShellStatus, `{"id":"job1"}`, "/id"},
		{ToolFileRead, `{"path":"a","limit":501}`, "/limit"},
		{ToolFileRead, `{"path":"a","offset":0}`, "/offset"},
		{ToolFileEdit, `{"path":"a","old_string":"","new_string":"b"}`, "/old_string"},
		{ToolFileEdit, `{"path":"a","old_string":"x"}`, "new_string"},
		{ToolFileWrite, `{"path":"a"}`, "content"},
		{ToolCodeSearch, `{"pattern":"x","mode":"everything"}`, "/mode"},
		{ToolCodeSearch, `{"pattern":"x","context":6}`, "/context"},
		{ToolCodeMatch, `{"pattern":"f($A)","limit":101}`, "/limit"},
		{ToolCodeFind, `{"question":"x","limit":21}`, "/limit"},
		{ToolCodeOutline, `{}`, "path"},
		{ToolCodeCallers, `{"symbol":"Open","depth":4}`, "/depth"},
		{ToolCodeCallers, `{"symbol":"Open","direction":"up"}`, "/direction"},
	} {
		got := reg.Invoke(context.Background(), tools.Call{Name: c.tool, Args: []byte(c.args), RunID: "r", AgentID: "a"})
		if !strings.HasPrefix(got, "ERROR: invalid arguments") || !strings.Contains(got, c.field) {
			t.Errorf("%s %s: %q does not name %s", c.tool, c.args, got, c.field)
		}
	}
}

func TestParseRangeForms(t *testing.T) {
	for raw, want := range map[string][2]int{`[3,9]`: {3, 9}, `{"from":1,"to":200}`: {1, 200}, `"4-7"`: {4, 7}, `"4–7"`: {4, 7}} {
		from, to, ok := parseRange([]byte(raw))
		if !ok || from != want[0] || to != want[1] {
			t.Errorf("%s: %d %d %v", raw, from, to, ok)
		}
	}
	for _, raw := range []string{`[0,3]`, `[5,2]`, `"x"`, `null`, `[1]`} {
		if _, _, ok := parseRange([]byte(raw)); ok {
			t.Errorf("%s parsed", raw)
		}
	}
}

func TestCallIDNamesAFileInTheRunFolder(t *testing.T) {
	for in, want := range map[string]string{"call_abc-1": "call_abc-1", "../../etc/x": "______etc_x", "a b/c": "a_b_c",
		strings.Repeat("x", 100): strings.Repeat("x", 64)} {
		if got := SafeFileName(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
