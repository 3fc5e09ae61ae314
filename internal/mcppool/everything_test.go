package mcppool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// everythingVersion pins @modelcontextprotocol/server-everything, the MCP
// project's reference server, run as a real peer of the pool.
const everythingVersion = "2026.8.31"

var (
	everythingOnce sync.Once
	everythingJS   string
	everythingErr  error
)

// everything returns the server's entry point, installed with npm once per
// machine under the temporary directory (world-readable: as root the pool
// runs a stdio server as nobody). Without npm the test is skipped, in CI it fails.
func everything(t *testing.T) (node, js string) {
	t.Helper()
	node, err := exec.LookPath("node")
	npm, nerr := exec.LookPath("npm")
	if err != nil || nerr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node and npm are needed for the server-everything peer")
		}
		t.Skip("node or npm not installed")
	}
	everythingOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), "guilds-server-everything-"+everythingVersion)
		js := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
		if _, err := os.Stat(js); err != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: the stdio server runs as nobody and must read it
				everythingErr = err
				return
			}
			cmd := exec.Command(npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", //nolint:gosec // G204: a pinned package name
				"@modelcontextprotocol/server-everything@"+everythingVersion)
			if out, err := cmd.CombinedOutput(); err != nil {
				everythingErr = fmt.Errorf("npm install: %v: %s", err, out)
				return
			}
		}
		everythingJS = js
	})
	if everythingErr != nil {
		t.Fatal(everythingErr)
	}
	return node, everythingJS
}

// everythingConnection adds a no-auth catalog row of the server and a
// connected login of it.
func everythingConnection(t testing.TB, db *pgxpool.Pool, slug, transport, url string, config any) string {
	t.Helper()
	cfg, _ := json.Marshal(config)
	var sid string
	if err := db.QueryRow(context.Background(), `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
VALUES ($1, $1, $2, $3, 'none', $4) RETURNING id`, slug, transport, url, string(cfg)).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	return connectionstest.InsertAs(t, db, sid, "organisation", uuid.NewString(), connstore.StatusConnected)
}

// exerciseEverything lists the server's tools through the pool and calls
// the ones that show what a real peer sends: plain text, a sum, structured
// content, a long-running operation (progress steps) and resource links.
func exerciseEverything(t *testing.T, p *mcppool.Pool, db *pgxpool.Pool, id string) {
	t.Helper()
	ctx := context.Background()
	listed, err := p.Sync(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range listed {
		names[tl.RemoteName] = true
	}
	for _, want := range []string{"echo", "get-sum", "get-structured-content", "trigger-long-running-operation", "get-resource-links"} {
		if !names[want] {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}
	if stored, err := mcppool.Stored(ctx, db, id); err != nil || len(stored) != len(listed) {
		t.Fatalf("stored %d of %d listed tools (%v)", len(stored), len(listed), err)
	}
	for _, c := range []struct{ tool, args, want string }{
		{"echo", `{"message":"hello pool"}`, "Echo: hello pool"},
		{"get-sum", `{"a":2,"b":40}`, "is 42"},
		{"get-structured-content", `{"location":"Chicago"}`, "temperature"},
		{"trigger-long-running-operation", `{"duration":1,"steps":3}`, "Long running operation completed"},
		// Non-text parts are described, never dumped as JSON or base64 (ADR 0617).
		{"get-resource-links", `{"count":2}`, "[resource link: Text Resource 2 <demo://resource/dynamic/text/2>"},
		// Small text links are read on the same session (ADR 0621), a
		// base64 one of a text type decoded.
		{"get-resource-links", `{"count":2}`, "plaintext resource]\nResource 2: This is a plaintext resource created at "},
		{"get-resource-links", `{"count":2}`, "Blob Resource 1 <demo://resource/dynamic/blob/1>, text/plain: Resource 1: plaintext resource]\nResource 1: This is a base64 blob created at "},
		{"get-structured-content", `{"location":"Chicago"}`, `{"conditions":"Light rain / drizzle","humidity":82,"temperature":36}`},
		{"get-tiny-image", `{}`, "[image: image/png, "},
	} {
		var pr progressed
		out, err := p.Call(mcppool.WithProgress(ctx, pr.fn), id, c.tool, json.RawMessage(c.args))
		if err != nil || strings.HasPrefix(out, "ERROR: ") || !strings.Contains(out, c.want) {
			t.Errorf("%s: %q, %v; want %q", c.tool, out, err, c.want)
		}
		if got := pr.got(); c.tool == "trigger-long-running-operation" && (len(got) != 3 || got[2] != [2]float64{3, 3}) {
			t.Errorf("%s reported progress %v, want its 3 steps", c.tool, got)
		}
	}
}

func TestServerEverythingOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node")
	}
	node, js := everything(t)
	db := testdb.New(t)
	id := everythingConnection(t, db, "everything-stdio", "stdio", "", map[string]any{"command": node, "args": []string{js, "stdio"}})
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	exerciseEverything(t, p, db, id)
}

func TestServerEverythingOverStreamableHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node")
	}
	url := everythingHTTP(t)
	db := testdb.New(t)
	id := everythingConnection(t, db, "everything-http", "http", url, map[string]any{})
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	exerciseEverything(t, p, db, id)
}
