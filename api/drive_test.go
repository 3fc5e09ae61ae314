package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	acts "github.com/guilds/guilds/activities/connect"
	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/adapters/drive/drivetest"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testtemporal"
)

// newDriveEnv is newMCPEnv with the box's Google client set up (the
// google-connectors integration, which Drive needs) and the catalog's Drive
// row, as seeded, pointed at a local Drive behind a local authorization
// server: the login is the generic OAuth client's, the adapter the real one.
func newDriveEnv(t *testing.T, tweaks ...func(*api.Deps)) (*mcpEnv, *oauthtest.Server, *drivetest.Fake) {
	t.Helper()
	me := &mcpEnv{browser: newBrowser()}
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GMAIL_OAUTH_CLIENT_ID": "drive-web-client", "GMAIL_OAUTH_CLIENT_SECRET": "drive-web-client-secret-0123"}
	me.Env = apitest.New(t, apitest.Options{Env: env, Tweak: func(d *api.Deps) {
		eng, err := connectors.New(context.Background(), connectors.Options{DB: d.DB, Keyring: kr,
			Providers: []connectors.ProviderID{"oauth2"}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(eng.Close)
		me.Engine = eng
		me.Pool = mcppool.New(mcppool.Options{DB: d.DB, Credentials: eng.Resolver()})
		t.Cleanup(me.Pool.Close)
		me.Adapters = host.New(host.Options{DB: d.DB, Credentials: eng.Resolver()})
		d.MCP = api.MCPDeps{Engine: eng, Pool: me.Pool, Adapters: me.Adapters, Keyring: kr}
		me.Activities = &acts.Activities{DB: d.DB, Engine: eng, Keyring: kr, Pool: me.Pool, Adapters: me.Adapters,
			Discoverer: &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}}
		me.Temporal = testtemporal.Client(t)
		me.queue = testtemporal.TaskQueue(t)
		d.Temporal = me.Temporal
		d.MCP.TaskQueue = me.queue
		for _, tw := range tweaks {
			tw(d)
		}
	}})
	me.startWorker(t)

	as := oauthtest.New(t)
	fake := drivetest.NewValid(t, as.Valid)
	fake.Tree()
	mux := http.NewServeMux()
	var base string
	prm := "/.well-known/oauth-protected-resource/drive/v3"
	mux.HandleFunc("GET "+prm, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": base + "/drive/v3", "authorization_servers": []string{as.URL}})
	})
	protected := oauthtest.BearerOnly(fake.Config.Handler, as.Valid, func() string { return base + prm })
	mux.Handle("/drive/v3", protected)
	mux.Handle("/drive/v3/", protected)
	base = newHTTPServer(t, mux)

	ms, err := catalog.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Slug == "drive" {
			if m.Kind != catalog.KindAdapter || len(m.Tools) != 8 {
				t.Fatalf("the catalog's Drive row: kind %s, %d tools", m.Kind, len(m.Tools))
			}
			m.URL = base + "/drive/v3"
			m.Config = json.RawMessage(`{"provider":"oauth2","dynamic_registration":true,"adapter":"drive"}`)
			if err := catalog.Seed(context.Background(), me.DB, []catalog.Manifest{m}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return me, as, fake
}

// A Drive login: pending after the Google login until the operator chooses
// a folder that is not My Drive from the folder lists; the choice connects
// it with the folder's name as its hint and its tools listed, create and
// copy Off; every call stays inside the folder.
func TestDriveLoginChoosesItsFolder(t *testing.T) {
	me, _, fake := newDriveEnv(t)
	org, _, _ := me.Hierarchy()
	r := me.doIn(t, me.browser, me.AdminToken, "POST", "/api/mcp/connect", `{"slug":"drive","owner_scope":"organisation","owner_id":"`+org+`"}`)
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)
	authURL := r.Map()["authorization_url"].(string)

	// Before the Google login there is no token to list folders with.
	if r := me.Admin("GET", "/api/mcp/connections/"+id+"/drive/folders", nil); r.Status != 409 || r.ErrorCode() != "not_logged_in" {
		t.Fatalf("folders before the login: %d %s", r.Status, r.Body)
	}
	if r := me.callback(t, follow(t, authURL)); r.Status != 200 || !strings.Contains(string(r.Body), `"status":"pending"`) {
		t.Fatalf("callback (the login waits for its folder): %d %s", r.Status, r.Body)
	}
	if st := me.status(t, id); st != "pending" {
		t.Fatalf("after the Google login the login is %s, want pending until a folder is chosen", st)
	}
	if n := me.Count("bindings"); n != 0 {
		t.Fatalf("%d bindings before the folder choice", n)
	}
	if r := me.Admin("GET", "/api/mcp/connections/"+id+"/tools", nil); r.Status != 200 || strings.Contains(string(r.Body), "drive_") {
		t.Fatalf("tools before the choice: %d %s", r.Status, r.Body)
	}

	folders := func(query string) string {
		t.Helper()
		r := me.Admin("GET", "/api/mcp/connections/"+id+"/drive/folders"+query, nil)
		if r.Status != 200 {
			t.Fatalf("folders%s: %d %s", query, r.Status, r.Body)
		}
		var got []map[string]string
		r.JSON(&got)
		var out []string
		for _, f := range got {
			out = append(out, f["place"]+":"+f["id"]+":"+f["name"])
		}
		return strings.Join(out, " ")
	}
	for q, want := range map[string]string{
		"":                            "my_drive:proj:Project X my_drive:other:Other",
		"?corpus=my":                  "my_drive:proj:Project X my_drive:other:Other",
		"?corpus=shared":              "shared_with_me:shared:Shared folder",
		"?corpus=drives":              "shared_drive:sd1:Finance drive",
		"?corpus=my&parent=proj":      "my_drive:sub:drafts",
		"?corpus=drives&parent=sd1":   "",
		"?corpus=shared&parent=other": "",
	} {
		if got := folders(q); got != want {
			t.Errorf("folders%s = %q, want %q", q, got, want)
		}
	}
	for q, field := range map[string]string{"?corpus=all": "corpus", "?parent=../x": "parent"} {
		if r := me.Admin("GET", "/api/mcp/connections/"+id+"/drive/folders"+q, nil); r.Status != 422 || !strings.Contains(string(r.Body), `"field":"`+field+`"`) {
			t.Errorf("folders%s: %d %s", q, r.Status, r.Body)
		}
	}

	choose := func(folder string) apitest.Response {
		t.Helper()
		return me.Admin("PUT", "/api/mcp/connections/"+id+"/drive/folder", map[string]any{"folder_id": folder})
	}
	for folder, want := range map[string]string{"": "is required", "root": "My Drive cannot be chosen", "root-id": "My Drive cannot be chosen",
		"plan": "is not a folder", "missing": "sees no folder", "../x": "is not a Drive file id"} {
		if r := choose(folder); r.Status != 422 || !strings.Contains(string(r.Body), `"field":"folder_id"`) || !strings.Contains(string(r.Body), want) {
			t.Errorf("choose %q: %d %s", folder, r.Status, r.Body)
		}
	}
	if st := me.status(t, id); st != "pending" {
		t.Fatalf("a refused choice left the login %s", st)
	}

	r = choose("proj")
	if r.Status != 200 {
		t.Fatalf("choose proj: %d %s", r.Status, r.Body)
	}
	m := r.Map()
	conn := m["connection"].(map[string]any)
	if conn["status"] != "connected" || conn["account_hint"] != "Project X" || m["tools"] != float64(8) {
		t.Fatalf("after the choice: %v", m)
	}
	tl := me.Admin("GET", "/api/mcp/connections/"+id+"/tools", nil)
	if tl.Status != 200 || !strings.Contains(string(tl.Body), `"drive_search_files"`) || !strings.Contains(string(tl.Body), `"drive_create_file"`) {
		t.Fatalf("tools: %d %s", tl.Status, tl.Body)
	}
	var off []string
	rows, err := me.DB.Query(context.Background(), `SELECT catalog_id FROM bindings WHERE catalog_kind = 'mcp_tool' AND NOT enabled ORDER BY catalog_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		off = append(off, n)
	}
	rows.Close()
	if strings.Join(off, ",") != "drive_copy_file,drive_create_file" {
		t.Fatalf("default-off tools %v", off)
	}

	// Calls stay inside the folder.
	st, res := me.call(t, id, "search_files", `{"query":"plan"}`)
	if out, _ := res["result"].(string); st != 200 || !strings.Contains(out, "plan\tplan.txt") || !strings.Contains(out, "deep\tplan doc") {
		t.Fatalf("search: %d %v", st, res)
	}
	for _, args := range []string{`{"query":"plan"}`, `{"query":"secret"}`} {
		_, res := me.call(t, id, "search_files", args)
		leaks(t, res)
		for _, outside := range drivetest.Outside {
			if strings.Contains(res["result"].(string), outside) {
				t.Fatalf("search %s returned %s: %v", args, outside, res)
			}
		}
	}
	_, res = me.call(t, id, "list_recent_files", `{}`)
	leaks(t, res)
	for _, outside := range []string{"hidden1", "otherplan", "sdplan", "sharedplan"} {
		_, res := me.call(t, id, "read_file_content", `{"file_id":"`+outside+`"}`)
		leaks(t, res)
		if out, _ := res["result"].(string); !strings.Contains(out, "no file "+outside+" in this login's folder") {
			t.Errorf("read %s: %v", outside, res)
		}
	}
	if st, res := me.call(t, id, "read_file_content", `{"file_id":"plan"}`); st != 200 || res["result"] != "the plan: ship" {
		t.Fatalf("read inside: %d %v", st, res)
	}
	if w := fake.Writes(); len(w) != 0 {
		t.Fatalf("writes %v", w)
	}

	// Another folder can be chosen later; the hint follows it.
	if r := choose("sd1"); r.Status != 200 || r.Map()["connection"].(map[string]any)["account_hint"] != "Finance drive" {
		t.Fatalf("choose again: %d %s", r.Status, r.Body)
	}
	if _, res := me.call(t, id, "read_file_content", `{"file_id":"plan"}`); !strings.Contains(res["result"].(string), "no file plan") {
		t.Fatalf("the old folder is still reachable: %v", res)
	}
}

func leaks(t *testing.T, res map[string]any) {
	t.Helper()
	b, _ := json.Marshal(res)
	// The names and contents of the files outside the folder (a refusal
	// repeats the id it was given, nothing more).
	for _, s := range []string{drivetest.Secret, "plan-secret", "other plan", "sd plan", "shared plan", "Finance drive", "Shared folder"} {
		if strings.Contains(string(b), s) {
			t.Fatalf("revealed %q: %s", s, b)
		}
	}
}
