package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	acts "github.com/guilds/guilds/activities/connect"
	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/workflows/connect"
)

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

// echoServer is a real MCP server: echo, a dotted tool and OpenSea's key tool.
func echoServer(extra ...string) *server.MCPServer {
	s := server.NewMCPServer("fake", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo"), mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("pages.search"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("none"), nil
	})
	for _, name := range extra {
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	}
	return s
}

// mcpEnv is the API with the connector engine, the MCP pool and (when
// withTemporal) a connect worker on the test's own task queue.
type mcpEnv struct {
	*apitest.Env
	Engine     *connectors.Engine
	Pool       *mcppool.Pool
	Adapters   *host.Host
	Temporal   client.Client
	Activities *acts.Activities
	queue      string
	worker     sdkworker.Worker
	// browser is the operator's browser: its cookie jar carries the OAuth
	// binding cookie from Connect to the callback.
	browser *http.Client
}

// newBrowser is a client with its own cookie jar that does not follow redirects.
func newBrowser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// doIn sends a request from a browser (its cookies), with a token when not "".
func (me *mcpEnv) doIn(t *testing.T, browser *http.Client, token, method, path string, body string) apitest.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, me.HTTP.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return apitest.Response{Status: resp.StatusCode, Body: raw}
}

func newMCPEnv(t *testing.T, withTemporal bool, tweak func(*api.MCPDeps)) *mcpEnv {
	t.Helper()
	return newMCPEnvLog(t, withTemporal, tweak, nil)
}

// newMCPEnvLog is newMCPEnv with the API's logger (nil: discarded).
func newMCPEnvLog(t *testing.T, withTemporal bool, tweak func(*api.MCPDeps), log *slog.Logger) *mcpEnv {
	t.Helper()
	return newMCPEnvDeps(t, withTemporal, tweak, log, nil)
}

// newMCPEnvDeps is newMCPEnvLog with a last change to the API's deps.
func newMCPEnvDeps(t *testing.T, withTemporal bool, tweak func(*api.MCPDeps), log *slog.Logger, deps func(*api.Deps)) *mcpEnv {
	t.Helper()
	me := &mcpEnv{browser: newBrowser()}
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	me.Env = apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) {
		if log != nil {
			d.Log = log
		}
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
		if withTemporal {
			me.Temporal = testtemporal.Client(t)
			me.queue = testtemporal.TaskQueue(t)
			d.Temporal = me.Temporal
			d.MCP.TaskQueue = me.queue
		}
		if tweak != nil {
			tweak(&d.MCP)
		}
		if deps != nil {
			deps(d)
		}
	}})
	if withTemporal {
		me.startWorker(t)
	}
	return me
}

func (me *mcpEnv) startWorker(t *testing.T) {
	w := sdkworker.New(me.Temporal, me.queue, sdkworker.Options{})
	connect.Register(w, me.Activities)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	me.worker = w
	t.Cleanup(w.Stop)
}

func (me *mcpEnv) stopWorker() { me.worker.Stop() }

// addServer upserts a remote catalog row.
func addServer(t *testing.T, db *pgxpool.Pool, slug, mcpURL, auth, config string) {
	t.Helper()
	_, err := db.Exec(context.Background(), `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
VALUES ($1, $1, 'remote', 'http', $2, $3, $4)
ON CONFLICT (slug) DO UPDATE SET url = EXCLUDED.url, auth = EXCLUDED.auth, config = EXCLUDED.config, published = true`,
		slug, mcpURL, auth, config)
	if err != nil {
		t.Fatal(err)
	}
}

// follow plays the browser: it opens the authorization URL and returns the
// callback URL the authorization server redirects to.
func follow(t *testing.T, authURL string) string {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// callback sends the browser's return to the API, from the browser that
// clicked Connect.
func (me *mcpEnv) callback(t *testing.T, location string) apitest.Response {
	t.Helper()
	return me.callbackIn(t, me.browser, location)
}

// callbackIn sends the browser's return from a given browser.
func (me *mcpEnv) callbackIn(t *testing.T, browser *http.Client, location string) apitest.Response {
	t.Helper()
	u, err := url.Parse(location)
	if err != nil {
		t.Fatal(err)
	}
	return me.doIn(t, browser, "", "GET", u.RequestURI(), "")
}

func newHTTPServer(t *testing.T, h http.Handler) string {
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}

func mcpTool(name string) mcp.Tool { return mcp.NewTool(name) }

func okHandler(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("ok"), nil
}
