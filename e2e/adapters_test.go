package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/adapters/drive/drivetest"
	"github.com/guilds/guilds/internal/adapters/qonto/qontotest"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// restAdapter is one key-connected adapter driven through the deployed
// platform: its fake service, the path the catalog row points at, the key,
// the tool the scripted run calls and a line its stamped answer must hold.
type restAdapter struct {
	slug, key, header, prefix string // header "" means the key is in the path
	base                      string
	routes                    map[string]string // path (after base) -> JSON answer
	tool                      string
	args                      map[string]any
	want                      string
}

// restAdapters are the REST adapters with the smallest answers their
// check and one tool accept.
var restAdapters = []restAdapter{
	{slug: "coingecko", key: "CG-e2e-secret-0123456789", header: "x-cg-pro-api-key", base: "/api/v3",
		routes: map[string]string{"/ping": `{"gecko_says":"(V3) To the Moon!"}`,
			"/search": `{"coins":[{"id":"bitcoin","name":"Bitcoin","symbol":"btc","market_cap_rank":1}]}`},
		tool: "coingecko_search", args: map[string]any{"query": "bitcoin"}, want: "bitcoin\tbtc\tBitcoin\t1"},
	{slug: "dexpaprika", key: "dxp-e2e-secret-0123456789", header: "Authorization", base: "",
		routes: map[string]string{"/usage": `{"plan":"pro"}`,
			"/search": `{"tokens":[{"id":"0xpepe","name":"Pepe","symbol":"PEPE","chain":"ethereum","price_usd":0.5}],"pools":[],"dexes":[]}`},
		tool: "dexpaprika_search", args: map[string]any{"query": "pepe"}, want: "token\tethereum\t0xpepe\tPepe\tPEPE"},
	{slug: "twitterapi", key: "tapi-e2e-secret-0123456789", header: "x-api-key", base: "",
		routes: map[string]string{"/oapi/my/info": `{"recharge_credits":98765}`,
			"/twitter/user/info": `{"status":"success","data":{"id":"44196397","userName":"jack","name":"Jack Dorsey"}}`},
		tool: "twitterapi_user", args: map[string]any{"user": "jack"}, want: "44196397\tjack\tJack Dorsey"},
	{slug: "x", key: "AAAAe2e-bearer-secret-0123456789", header: "Authorization", prefix: "Bearer ", base: "/2",
		routes: map[string]string{"/users/by/username/": `{"data":{"id":"2244994945","username":"XDevelopers","name":"Developers"}}`},
		tool:   "x_user", args: map[string]any{"user": "XDevelopers"}, want: "2244994945\tXDevelopers\tDevelopers"},
	{slug: "alchemy", key: "alch-e2e-secret-0123456789", base: "/nft/v3",
		routes: map[string]string{"/getNFTsForOwner": `{"ownedNfts":[],"totalCount":0}`},
		tool:   "alchemy_holdings", args: map[string]any{"owner": "0x000000000000000000000000000000000000dEaD", "chain": "ethereum"}, want: "0"},
}

// serve starts the adapter's fake: a request without the key is refused
// with 401, a known path answers its JSON, anything else 404.
func (a restAdapter) serve(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, ok := strings.CutPrefix(r.URL.Path, a.base)
		if a.header == "" {
			path, ok = strings.CutPrefix(path, "/"+a.key)
		} else if r.Header.Get(a.header) != a.prefix+a.key {
			ok = false
		}
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid key"}`))
			return
		}
		for p, body := range a.routes {
			if path == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(path, p)) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(body))
				return
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestDeployedAdapters drives every built-in adapter but Gmail through a
// production-shaped install, connected as an operator would: the instance
// admin points each catalog row at a local stand-in (REST fakes, the Drive
// fake behind a local Google login with its folder chosen, the Qonto fake,
// a ganache node behind the Wallet's endpoints); the organisation connects
// with a key or key fields, a wrong one refused first. One scripted run on a
// sandboxed workspace calls one tool of each (Qonto's upload reads the file
// the run wrote): each stamped answer reaches the transcript, and no key
// reaches the transcript, the model, the run's history or the logs.
func TestDeployedAdapters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	var calls []toolCall
	for _, a := range restAdapters {
		calls = append(calls, toolCall{a.tool, a.args})
	}
	invoiceTx := qontotest.TxID(1, 0)
	calls = append(calls, toolCall{"drive_search_files", map[string]any{"query": "plan"}},
		toolCall{"wallet_get_balance", map[string]any{"chain": "ethereum"}},
		toolCall{"file_write", map[string]any{"path": "invoices/adobe.pdf", "content": "%PDF-1.4\n% an invoice\n"}})
	// The upload reads the file the turn before wrote.
	upload := []toolCall{{"qonto_upload_invoice", map[string]any{"transaction_id": invoiceTx, "path": "invoices/adobe.pdf"}}}
	model := newScriptedModel(t, boxModelKey, calls, upload, nil)

	cli := dockertest.Client(t)
	image := dockertest.AgentImage(t, cli)
	node := startGanache(t)
	var agent string
	// Registered before deploy, so it runs after the worker stopped: the
	// agent's home volume outlives its sandboxes by design.
	t.Cleanup(func() {
		if agent != "" {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = cli.VolumeRemove(ctx, workspaces.HomeVolume(agent), true)
		}
	})
	const googleID, googleSecret = "google-web-client", "google-web-client-secret-0123"
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL,
		"GMAIL_OAUTH_CLIENT_ID": googleID, "GMAIL_OAUTH_CLIENT_SECRET": googleSecret,
		"GUILDS_SANDBOX_DRIVER": "docker", "GUILDS_SANDBOX_IMAGE": image, "GUILDS_SANDBOX_SCOPE": fmt.Sprintf("e2e-adapters-%d", time.Now().UnixNano())})
	as := oauthtest.New(t)
	as.AddClient(googleID, googleSecret, "client_secret_post", d.API+"/api/mcp/oauth/callback")

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agent = d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Analyst",
		"config": map[string]any{"coding": true}})["id"].(string)

	secrets := []string{boxModelKey}
	for _, a := range restAdapters {
		fake := a.serve(t)
		d.must(200, "PATCH", "/api/admin/mcp/servers/"+a.slug, map[string]any{"url": fake.URL + a.base})
		bad := d.Call("POST", "/api/mcp/connect", map[string]any{"slug": a.slug, "owner_scope": "organisation", "owner_id": org, "key": a.key + "-wrong"})
		if bad.Status < 400 {
			t.Fatalf("%s: a wrong key was accepted: %d %s", a.slug, bad.Status, bad.Body)
		}
		r := d.Call("POST", "/api/mcp/connect", map[string]any{"slug": a.slug, "owner_scope": "organisation", "owner_id": org, "key": a.key})
		if r.Status >= 300 {
			t.Fatalf("%s: connect: %d %s\n%s", a.slug, r.Status, r.Body, d.Logs())
		}
		secrets = append(secrets, a.key)
	}

	connectDrive(t, d, as, org)
	qonto := qontotest.New(t)
	connectValues(t, d, org, "qonto", qonto.URL, map[string]string{"login": qontotest.Login, "secret_key": qontotest.SecretKey}, "secret_key")
	secrets = append(secrets, qontotest.GoodKey, qontotest.SecretKey)
	wallet := walletValues()
	connectValues(t, d, org, "wallet", walletServices(t, node).URL+"/v2", wallet, "opensea_api_key")
	for _, v := range wallet {
		secrets = append(secrets, v)
	}
	secrets = append(secrets, googleSecret)
	secrets = append(secrets, as.Issued()...)

	run := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Look each one up."})
	runID := run["id"].(string)
	transcript := d.waitRun(runID)
	wants := map[string]string{"drive_search_files": "plan\tplan.txt\t", "wallet_get_balance": "balance: 100 ETH",
		"qonto_upload_invoice": "attached\t" + invoiceTx + "\t"}
	for _, a := range restAdapters {
		wants[a.tool] = a.want
	}
	checkStamped(t, transcript, wants)
	if strings.Contains(transcript, drivetest.Secret) {
		t.Errorf("drive: a file outside the chosen folder reached the transcript")
	}
	if n := len(qonto.Uploads()); n != 1 {
		t.Errorf("qonto received %d uploads, want 1", n)
	}
	// Each adapter call's audit event says it was an adapter's and names the
	// login that served it.
	var events []struct {
		Tool, Kind, Outcome string
		ConnectionID        string `json:"connection_id"`
	}
	if r := d.Call("GET", "/api/orgs/"+org+"/audit?action=tool_call&run_id="+runID, nil); r.Status != 200 || json.Unmarshal(r.Body, &events) != nil {
		t.Fatalf("the run's audit trail: %d %s", r.Status, r.Body)
	}
	audited := map[string]bool{}
	for _, e := range events {
		audited[e.Tool] = true
		if _, ok := wants[e.Tool]; ok && (e.Kind != "adapter" || e.ConnectionID == "" || e.Outcome != "ok") {
			t.Errorf("audit event of %s: %+v", e.Tool, e)
		}
	}
	for tool := range wants {
		if !audited[tool] {
			t.Errorf("no audit event for %s", tool)
		}
	}
	places := map[string]string{
		"the transcript":          transcript,
		"what the model received": model.Received(),
		"the run's history":       d.history("run-" + runID),
		"the logs":                d.Logs(),
	}
	for place, text := range places {
		for _, s := range append(secrets, d.secrets...) {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s holds a credential (%.8s…)", place, s)
			}
		}
	}
}

// connectDrive points the Drive row at a local Drive behind the local
// authorization server (the instance admin), logs the organisation in with
// the browser and chooses the folder the agents may use.
func connectDrive(t *testing.T, d *deployment, as *oauthtest.Server, org string) {
	t.Helper()
	fake := drivetest.NewValid(t, as.Valid)
	fake.Tree()
	row := d.must(200, "GET", "/api/admin/mcp/servers/drive", nil)
	cfg, _ := row["config"].(map[string]any)
	cfg["oauth"] = map[string]any{"auth_url": as.URL + "/authorize", "token_url": as.URL + "/token"}
	d.must(200, "PATCH", "/api/admin/mcp/servers/drive", map[string]any{"url": fake.URL + "/drive/v3", "config": cfg})

	conn := d.must(200, "POST", "/api/mcp/connect", map[string]any{"slug": "drive", "owner_scope": "organisation", "owner_id": org})
	id := conn["connection"].(map[string]any)["id"].(string)
	resp, err := d.Browser.Get(conn["authorization_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(resp); resp.StatusCode != 200 || !strings.Contains(body, `"pending"`) {
		t.Fatalf("drive callback: %d %s\n%s", resp.StatusCode, body, d.Logs())
	}
	if r := d.must(200, "PUT", "/api/mcp/connections/"+id+"/drive/folder", map[string]any{"folder_id": "proj"}); r["connection"].(map[string]any)["status"] != "connected" {
		t.Fatalf("drive folder choice: %v", r)
	}
}

// connectValues points a key-fields row at url (the instance admin) and
// connects the organisation with values, as the connect dialog sends them;
// first the same values with the field wrong are refused.
func connectValues(t *testing.T, d *deployment, org, slug, url string, values map[string]string, wrong string) {
	t.Helper()
	d.must(200, "PATCH", "/api/admin/mcp/servers/"+slug, map[string]any{"url": url})
	bad := map[string]string{}
	for k, v := range values {
		bad[k] = v
	}
	bad[wrong] += "-wrong"
	if r := d.Call("POST", "/api/mcp/connect", map[string]any{"slug": slug, "owner_scope": "organisation", "owner_id": org, "values": bad}); r.Status < 400 {
		t.Fatalf("%s: a wrong %s was accepted: %d %s", slug, wrong, r.Status, r.Body)
	}
	r := d.Call("POST", "/api/mcp/connect", map[string]any{"slug": slug, "owner_scope": "organisation", "owner_id": org, "values": values})
	if r.Status >= 300 {
		t.Fatalf("%s: connect: %d %s\n%s", slug, r.Status, r.Body, d.Logs())
	}
}

// checkStamped finds each tool's call in the run's transcript and checks
// that it succeeded through its adapter and that its answer holds the
// wanted text followed by the stamp's trailer (what the model was told).
func checkStamped(t *testing.T, transcript string, wants map[string]string) {
	t.Helper()
	tr := transcriptOf(t, transcript)
	seen := map[string]bool{}
	for _, c := range tr.ToolCalls {
		want, ok := wants[c.Tool]
		if !ok {
			continue
		}
		seen[c.Tool] = true
		i := strings.Index(c.Result, want)
		if c.Outcome != "ok" || c.Metadata["class"] != "adapter" || i < 0 || !strings.Contains(c.Result[i:], "\nremaining_tool_calls: ") {
			t.Errorf("%s: outcome %s, metadata %v, answer lacks %q before the stamp:\n%s", c.Tool, c.Outcome, c.Metadata, want, c.Result)
		}
	}
	for tool := range wants {
		if !seen[tool] {
			t.Errorf("the run did not call %s:\n%s", tool, transcript)
		}
	}
}
