package native_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/guilds/guilds/internal/grants"
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
	if err := grants.Seed(ctx, db); err != nil {
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

// The catalog's class of a native tool (what the Tools view and the run
// snapshot show) is the class its registration runs it under.
func TestCatalogClassesMatchTheRegistry(t *testing.T) {
	reg := native.Registry(nil, slog.New(slog.DiscardHandler))
	for _, n := range grants.NativeCatalog() {
		tl, ok := reg.Lookup(n.Name)
		if !ok {
			continue // catalogued, not built yet
		}
		if tl.Class != n.Class {
			t.Errorf("%s: catalog class %q, registered class %q", n.Name, n.Class, tl.Class)
		}
	}
}
