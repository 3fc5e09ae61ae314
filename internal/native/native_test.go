package native_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
)

// A production install (seeded catalog, the registry boot builds) offers the
// eleven code tools to an agent whose coding flag is on, and none of them
// when it is off.
func TestCodeToolsAreOfferedWhenCodingIsOn(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	svc := grants.NewService(native.Registry(db, log), nil, log)
	var agent string
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'Ops' FROM o RETURNING id)
		INSERT INTO agents (guild_id, name, config) SELECT id, 'Coder', '{"coding":true,"memory":true,"scripting":true}' FROM g RETURNING id`).
		Scan(&agent); err != nil {
		t.Fatal(err)
	}
	offered := func() map[string]tools.Class {
		t.Helper()
		o, err := svc.Offered(ctx, db, agent, grants.TriggerDirect)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]tools.Class{}
		for _, tl := range o.Tools {
			out[tl.Name] = tl.Class
		}
		return out
	}
	on := offered()
	for _, n := range code.Names {
		class, ok := on[n]
		if !ok {
			t.Errorf("coding on: %s not offered", n)
			continue
		}
		want := tools.ClassCode
		if n == code.ToolShell {
			want = tools.ClassShell
		}
		if class != want {
			t.Errorf("%s offered with class %s, want %s", n, class, want)
		}
	}
	if _, err := db.Exec(ctx, `UPDATE agents SET config = config || '{"coding":false}' WHERE id = $1`, agent); err != nil {
		t.Fatal(err)
	}
	off := offered()
	for _, n := range code.Names {
		if _, ok := off[n]; ok {
			t.Errorf("coding off: %s offered", n)
		}
	}
	if _, ok := off["report_issue"]; !ok {
		t.Fatalf("coding off offers %v: the rest of the native tools went too", off)
	}
}

// The API server's registry has no workspace: the tools are declared and a
// call says where they run.
func TestCodeToolWithoutAWorkspaceSaysSo(t *testing.T) {
	reg := native.Registry(nil, slog.New(slog.DiscardHandler))
	got := reg.Invoke(context.Background(), tools.Call{Name: code.ToolShell, Args: []byte(`{"command":"echo hi"}`),
		RunID: "r", AgentID: "a", Seq: 3})
	if got != tools.ErrorResult(sandbox.ErrNoWorkspace.Error()) {
		t.Fatalf("got %q", got)
	}
}

// The native catalog is what the families register: every tool of the
// registry is listed, each family's tools together, the families in the
// Tools view's order, each with the gate, flag, triggers and integration its
// family declares.
func TestCatalogIsWhatTheFamiliesRegister(t *testing.T) {
	reg := native.Registry(nil, slog.New(slog.DiscardHandler))
	catalog := grants.NativeCatalog(reg)
	if len(catalog) != len(reg.All()) || len(catalog) != 45 {
		t.Fatalf("catalog of %d tools, registry of %d; want 45 in both", len(catalog), len(reg.All()))
	}
	var families []string
	byName := map[string]grants.NativeTool{}
	for _, n := range catalog {
		if len(families) == 0 || families[len(families)-1] != n.Family {
			families = append(families, n.Family)
		}
		byName[n.Name] = n
	}
	want := []string{"notes", "records", "memory", "scripts", "schedules", "secrets", "search", "group", "issues", "browser", "code"}
	if !slices.Equal(families, want) {
		t.Fatalf("families in catalog order %v, want %v (each family's tools together)", families, want)
	}
	for _, c := range []struct {
		name        string
		gate        grants.Gate
		class       tools.Class
		flag        string
		triggers    []grants.Trigger
		integration string
	}{
		{"note_get", grants.GateBinding, tools.ClassDefault, "", nil, ""},
		{"memory_write", grants.GateBinding, tools.ClassDefault, "memory", nil, ""},
		{"script_run", grants.GateBinding, tools.ClassShell, "scripting", nil, ""},
		{"schedule_list", grants.GateBinding, tools.ClassDefault, "", []grants.Trigger{grants.TriggerDirect, grants.TriggerGroup}, ""},
		{"secret_store", grants.GateBinding, tools.ClassDefault, "", nil, ""},
		{"secret_request", grants.GateBinding, tools.ClassScript, "", []grants.Trigger{grants.TriggerDirect}, ""},
		{"tavily_search", grants.GateBinding, tools.ClassDefault, "", nil, "web-search"},
		{"report_issue", grants.GateAlways, tools.ClassDefault, "", nil, ""},
		{"browser_click", grants.GateBrowser, tools.ClassBrowser, "", nil, ""},
		{"shell", grants.GateCoding, tools.ClassShell, "", nil, ""},
		{"code_map", grants.GateCoding, tools.ClassCode, "", nil, ""},
	} {
		n := byName[c.name]
		if n.Gate != c.gate || n.Class != c.class || n.Flag != c.flag || !slices.Equal(n.Triggers, c.triggers) || n.Integration != c.integration {
			t.Errorf("%s listed as %+v", c.name, n)
		}
	}
}
