package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// fakeGmail answers the Gmail API calls the adapter makes, for tokens the
// authorization server issued; refuse makes the profile check answer 403, as
// Google does for a token granted without the Gmail scopes.
func fakeGmail(t *testing.T, as *oauthtest.Server, refuse *atomic.Bool) *httptest.Server {
	mux := http.NewServeMux()
	authorized := func(w http.ResponseWriter, r *http.Request) bool {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !as.Valid(tok) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`))
			return false
		}
		if refuse.Load() {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"error":{"code":403,"message":"Request had insufficient authentication scopes.","status":"PERMISSION_DENIED"}}`))
			return false
		}
		return true
	}
	mux.HandleFunc("GET /gmail/v1/users/me/profile", func(w http.ResponseWriter, r *http.Request) {
		if authorized(w, r) {
			_ = json.NewEncoder(w).Encode(map[string]any{"emailAddress": "ops@acme.test", "messagesTotal": 12, "threadsTotal": 9, "historyId": "4242"})
		}
	})
	mux.HandleFunc("GET /gmail/v1/users/me/labels", func(w http.ResponseWriter, r *http.Request) {
		if authorized(w, r) {
			_ = json.NewEncoder(w).Encode(map[string]any{"labels": []any{
				map[string]any{"id": "INBOX", "name": "INBOX", "type": "system"},
				map[string]any{"id": "Label_1", "name": "Invoices", "type": "user"}}})
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// TestDeployedGmailLogin connects Gmail with a Google login (a local
// authorization server standing in for Google's, and a fake Gmail API): the
// callback checks the new token with Gmail's profile, the login ends connected
// with the mailbox address as its hint and lists its tools. A token Gmail
// refuses ends the login instead of leaving it connected.
func TestDeployedGmailLogin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	const clientID, clientSecret = "gmail-web-client", "gmail-web-client-secret-0123"
	as := oauthtest.New(t)
	var refuse atomic.Bool
	gmail := fakeGmail(t, as, &refuse)
	d := deploy(t, map[string]string{"GMAIL_OAUTH_CLIENT_ID": clientID, "GMAIL_OAUTH_CLIENT_SECRET": clientSecret})
	d.secrets = append(d.secrets, clientSecret)
	as.AddClient(clientID, clientSecret, "client_secret_post", d.API+"/api/mcp/oauth/callback")

	// The instance admin points the Gmail row at the stand-ins.
	row := d.must(200, "GET", "/api/admin/mcp/servers/gmail", nil)
	cfg, _ := row["config"].(map[string]any)
	cfg["oauth"] = map[string]any{"auth_url": as.URL + "/authorize", "token_url": as.URL + "/token"}
	d.must(200, "PATCH", "/api/admin/mcp/servers/gmail", map[string]any{"url": gmail.URL + "/gmail/v1", "config": cfg})

	connect := func(org string) (map[string]any, string, int) {
		conn := d.must(200, "POST", "/api/mcp/connect", map[string]any{"slug": "gmail", "owner_scope": "organisation", "owner_id": org})
		authURL, _ := conn["authorization_url"].(string)
		if q := authURL; !strings.Contains(q, "access_type=offline") || !strings.Contains(q, "gmail.compose") {
			t.Fatalf("authorization URL %s", authURL)
		}
		resp, err := d.Browser.Get(authURL)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		body := readAll(resp)
		_ = json.Unmarshal([]byte(body), &out)
		return out, conn["connection"].(map[string]any)["id"].(string), resp.StatusCode
	}

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	out, id, status := connect(org)
	if status != 200 || out["status"] != "connected" || out["account_hint"] != "ops@acme.test" {
		t.Fatalf("callback: %d %v\n%s", status, out, d.Logs())
	}
	if c := d.must(200, "GET", "/api/mcp/connections/"+id, nil); c["account_hint"] != "ops@acme.test" || c["status"] != "connected" {
		t.Fatalf("the login: %v", c)
	}
	tools := d.Call("GET", "/api/mcp/connections/"+id+"/tools", nil)
	for _, want := range []string{`"gmail_search_threads"`, `"gmail_list_labels"`, `"gmail_send_message"`} {
		if !strings.Contains(string(tools.Body), want) {
			t.Errorf("tools lack %s: %s", want, tools.Body)
		}
	}
	if r := d.must(200, "POST", "/api/mcp/connections/"+id+"/call", map[string]any{"tool": "list_labels", "arguments": map[string]any{}}); !strings.Contains(r["result"].(string), "Invoices") {
		t.Fatalf("list_labels: %v", r)
	}

	// Gmail refuses what Google granted: the new login does not survive.
	refuse.Store(true)
	other := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Other"})["id"].(string)
	out, id, status = connect(other)
	if status == 200 || out["error"] == nil {
		t.Fatalf("a refused profile check answered %d %v", status, out)
	}
	if r := d.Call("GET", "/api/mcp/connections/"+id, nil); r.Status != 404 {
		t.Fatalf("the refused login is still there: %d %s\n%s", r.Status, r.Body, d.Logs())
	}
	for _, s := range append(as.Issued(), d.secrets...) {
		if strings.Contains(d.Logs(), s) {
			t.Errorf("the logs hold a credential (%.8s…)", s)
		}
	}
}
