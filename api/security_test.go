package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/secret"
)

// victim is an organisation with one of everything an operator can address by id.
type victim struct {
	org, guild, agent, collection, record, run, issue, conn, user, schedule, secretRequest, approval, input string
}

func seedVictim(t *testing.T, me *mcpEnv) victim {
	t.Helper()
	ctx := context.Background()
	var v victim
	v.org, v.guild, v.agent = me.Hierarchy()
	for _, base := range []string{"/api/agents/" + v.agent, "/api/guilds/" + v.guild, "/api/orgs/" + v.org} {
		if r := me.Admin("PUT", base+"/notes/plan.md", map[string]any{"content": "victim plan"}); r.Status != 201 {
			t.Fatalf("note: %d %s", r.Status, r.Body)
		}
	}
	if r := me.Admin("PUT", "/api/agents/"+v.agent+"/memory", map[string]any{"content": "victim memory"}); r.Status != 200 {
		t.Fatalf("memory: %d %s", r.Status, r.Body)
	}
	r := me.Admin("POST", "/api/orgs/"+v.org+"/collections", map[string]any{"name": "leads",
		"columns": []map[string]any{{"name": "name", "type": "text"}}})
	if r.Status != 201 {
		t.Fatalf("collection: %d %s", r.Status, r.Body)
	}
	v.collection = r.Map()["id"].(string)
	if r := me.Admin("PUT", "/api/collections/"+v.collection+"/grants", map[string]any{"guild_id": v.guild, "access": "read"}); r.Status != 200 {
		t.Fatalf("grant: %d %s", r.Status, r.Body)
	}
	r = me.Admin("POST", "/api/collections/"+v.collection+"/records", map[string]any{"name": "Ada"})
	if r.Status != 201 {
		t.Fatalf("record: %d %s", r.Status, r.Body)
	}
	v.record = r.Map()["id"].(string)
	if r := me.Admin("PUT", "/api/orgs/"+v.org+"/model-keys/openrouter", map[string]string{"key": "sk-or-victim-key-123456"}); r.Status != 204 {
		t.Fatalf("model key: %d %s", r.Status, r.Body)
	}
	if err := me.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, status, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 'running', 5, 5) RETURNING id`, v.agent, v.guild, v.org).Scan(&v.run); err != nil {
		t.Fatal(err)
	}
	iss, err := issues.File(ctx, me.DB, issues.New{GuildID: v.guild, AgentID: v.agent, Kind: "api", Summary: "victim issue"})
	if err != nil {
		t.Fatal(err)
	}
	v.issue = iss.ID
	if err := me.DB.QueryRow(ctx, `INSERT INTO schedules (agent_id, kind, cron, description, instruction)
		VALUES ($1, 'cron', '0 9 * * *', 'victim schedule', 'victim instruction') RETURNING id`, v.agent).Scan(&v.schedule); err != nil {
		t.Fatal(err)
	}
	req, err := agentsecrets.OpenRequest(ctx, me.DB, agentsecrets.NewRequest{RunID: v.run, AgentID: v.agent, OrgID: v.org, Seq: 2,
		Name: "VICTIM_TOKEN", Reason: "victim reason"})
	if err != nil {
		t.Fatal(err)
	}
	v.secretRequest = req.ID
	areq, err := approvals.Ask(ctx, me.DB, approvals.Request{OrganisationID: v.org, GuildID: v.guild,
		Binding: approvals.Binding{RunID: v.run, Seq: 3, AgentID: v.agent, Tool: "wallet_send", ArgsDigest: "sha256:00",
			PolicyVersion: "p1:00", ExpiresAt: time.Now().Add(time.Hour)},
		Arguments: json.RawMessage(`{"to":"victim reason"}`), AskedBecause: "victim reason"})
	if err != nil {
		t.Fatal(err)
	}
	v.approval = areq.ID
	ireq, err := inputs.Ask(ctx, me.DB, inputs.Request{RunID: v.run, Seq: 4, OrganisationID: v.org, GuildID: v.guild,
		AgentID: v.agent, Tool: "shop_order", Server: "shop", ExpiresAt: time.Now().Add(time.Hour)},
		inputs.Form{Mode: inputs.ModeForm, Message: "victim reason", Schema: json.RawMessage(`{"type":"object","properties":{}}`)})
	if err != nil {
		t.Fatal(err)
	}
	v.input = ireq.ID
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-victim"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	r = me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": v.org, "key": "eth-victim"})
	if r.Status != 200 {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	v.conn = r.Map()["connection"].(map[string]any)["id"].(string)
	me.Operator(v.org)
	if err := me.DB.QueryRow(ctx, `SELECT user_id FROM memberships WHERE organisation_id = $1 LIMIT 1`, v.org).Scan(&v.user); err != nil {
		t.Fatal(err)
	}
	return v
}

// fingerprint is a digest of every row of every table but the token
// bookkeeping, so a probe that changes anything shows.
func fingerprint(t *testing.T, e *apitest.Env) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := e.DB.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT IN ('api_tokens', 'schema_migrations')`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	out := map[string]string{}
	for _, tb := range tables {
		var sum string
		if err := e.DB.QueryRow(ctx, `SELECT coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM "`+tb+`" t`).Scan(&sum); err != nil {
			t.Fatal(err)
		}
		out[tb] = sum
	}
	return out
}

// TestOtherOrganisationsIDsAreInvisible probes every documented operation as
// an operator of another organisation, with the victim's ids in the path, the
// query or the body: each is refused as not found (or forbidden on admin
// routes), and nothing in the database changes.
func TestOtherOrganisationsIDsAreInvisible(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	entry, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	me.Server.Models = &models.Resolver{Integrations: me.Server.Integrations, Keyring: kr}
	v := seedVictim(t, me)
	attackerOrg := me.Admin("POST", "/api/orgs", map[string]any{"name": "Attacker"}).Map()["id"].(string)
	attackerGuild := me.Admin("POST", "/api/orgs/"+attackerOrg+"/guilds", map[string]any{"name": "G"}).Map()["id"].(string)
	attackerAgent := me.Admin("POST", "/api/guilds/"+attackerGuild+"/agents", map[string]any{"name": "A"}).Map()["id"].(string)
	op := me.Operator(attackerOrg)

	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	me.Do("", "GET", "/api/openapi.json", nil).JSON(&doc)

	// Operations without an id in the path, probed with the victim's ids where they take one.
	type probe struct {
		path   string
		body   any
		status int
	}
	noID := map[string][]probe{
		"GET /api/orgs":          nil, // lists only what the caller sees (checked below)
		"POST /api/orgs":         nil, // creates a new organisation of the caller's
		"GET /api/instance":      nil,
		"GET /api/worker-health": nil, // the box's workers, no organisation's data
		"GET /api/mcp/servers":   nil,
		"GET /healthz":           nil,
		"GET /readyz":            nil,
		"GET /metrics":           nil,
		"GET /api/openapi.json":  nil,
		// The platform's own OAuth client metadata: no organisation's data.
		"GET /oauth/client-metadata.json": {{"/oauth/client-metadata.json", nil, 200}},
		// The caller's own session only (api/app_session_test.go).
		"GET /api/session":    {{"/api/session", nil, 200}},
		"POST /api/session":   {{"/api/session", map[string]any{"token": "gld_forged"}, 401}},
		"DELETE /api/session": {{"/api/session", nil, 204}},
		// The codec holds no organisation's data; its admin-only rule is in temporal_codec_test.go.
		"POST /api/temporal/codec/decode":    nil,
		"POST /api/temporal/codec/encode":    nil,
		"OPTIONS /api/temporal/codec/decode": nil,
		"OPTIONS /api/temporal/codec/encode": nil,
		"GET /api/admin/mcp/servers":         {{"/api/admin/mcp/servers", nil, 403}},
		"GET /api/admin/github/approvals":    {{"/api/admin/github/approvals", nil, 403}},
		"GET /api/admin/github/app":          {{"/api/admin/github/app", nil, 403}},
		"GET /api/admin/audit":               {{"/api/admin/audit", nil, 403}},
		"GET /api/admin/audit/export":        {{"/api/admin/audit/export", nil, 403}},
		"POST /api/admin/mcp/servers":        {{"/api/admin/mcp/servers", map[string]any{"slug": "x", "name": "x"}, 403}},
		"POST /api/users":                    {{"/api/users", map[string]any{"name": "x", "organisation_id": v.org}, 403}},
		"GET /api/users":                     {{"/api/users", nil, 403}},
		"GET /api/admin/prices":              {{"/api/admin/prices", nil, 403}},
		"PUT /api/admin/prices":              {{"/api/admin/prices", map[string]any{"provider": "openrouter", "model": "x", "input_per_million": 1, "output_per_million": 1}, 403}},
		"DELETE /api/admin/prices":           {{"/api/admin/prices?provider=openrouter&model=x", nil, 403}},
		"GET /api/mcp/oauth/callback":        {{"/api/mcp/oauth/callback?state=forged&code=x", nil, 400}},
		"POST /api/mcp/oauth/callback":       {{"/api/mcp/oauth/callback", map[string]any{"state": "forged", "code": "x"}, 400}},
		// The GitHub installation picker answers only a pending login's own state.
		"GET /api/mcp/oauth/github-installation":  {{"/api/mcp/oauth/github-installation?state=forged", nil, 400}},
		"POST /api/mcp/oauth/github-installation": {{"/api/mcp/oauth/github-installation?state=forged", map[string]any{"account": "victim"}, 400}},
		// An operator's own tokens only: another user's are refused.
		"GET /api/tokens":  {{"/api/tokens?user_id=" + v.user, nil, 403}},
		"POST /api/tokens": {{"/api/tokens", map[string]any{"name": "x", "user_id": v.user}, 403}},
		// It searches with the key in the body only and reads no stored data;
		// without a key it is refused before any call.
		"POST /api/mcp/pinned-prices/search": {{"/api/mcp/pinned-prices/search", map[string]any{"query": "bitcoin"}, 422}},
		"GET /api/mcp/connections": {
			{"/api/mcp/connections?owner_scope=organisation&owner_id=" + v.org, nil, 404},
			{"/api/mcp/connections?owner_scope=guild&owner_id=" + v.guild, nil, 404},
			{"/api/mcp/connections?owner_scope=agent&owner_id=" + v.agent, nil, 404},
		},
		"POST /api/mcp/connections": {
			{"/api/mcp/connections", map[string]any{"slug": "etherscan", "owner_scope": "guild", "owner_id": v.guild}, 404},
		},
		"POST /api/mcp/connect": {
			{"/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "agent", "owner_id": v.agent, "key": "k"}, 404},
		},
		"GET /api/bindings": {{"/api/bindings?scope=guild&scope_id=" + v.guild, nil, 404}},
		"PUT /api/bindings": {
			{"/api/bindings", map[string]any{"scope": "agent", "scope_id": v.agent, "catalog_kind": "mcp", "catalog_id": "etherscan", "enabled": false}, 404},
			// The victim's login bound at the attacker's own scopes.
			{"/api/bindings", map[string]any{"scope": "organisation", "scope_id": attackerOrg, "catalog_kind": "mcp", "catalog_id": "etherscan", "enabled": true, "connection_id": v.conn}, 422},
			{"/api/bindings", map[string]any{"scope": "agent", "scope_id": attackerAgent, "catalog_kind": "mcp", "catalog_id": "etherscan", "enabled": true, "connection_id": v.conn}, 422},
		},
		"GET /api/approval-policies": {{"/api/approval-policies?scope=guild&scope_id=" + v.guild, nil, 404}},
		"PUT /api/approval-policies": {
			{"/api/approval-policies", map[string]any{"scope": "guild", "scope_id": v.guild, "tool": "report_issue", "ask": true}, 404},
			{"/api/approval-policies", map[string]any{"scope": "platform", "tool": "report_issue", "ask": true}, 403},
		},
		"DELETE /api/approval-policies": {
			{"/api/approval-policies", map[string]any{"scope": "organisation", "scope_id": v.org, "tool": "report_issue"}, 404},
		},
		"DELETE /api/bindings": {
			{"/api/bindings", map[string]any{"scope": "organisation", "scope_id": v.org, "catalog_kind": "mcp", "catalog_id": "etherscan"}, 404},
		},
	}
	// Cross-organisation references from the attacker's own objects.
	extra := []probe{
		{"/api/orgs/" + attackerOrg + "/collections", map[string]any{"name": "steal", "guild_id": v.guild, "columns": []map[string]any{{"name": "n", "type": "text"}}}, 0},
	}

	bodies := map[string]any{
		"PATCH /api/orgs/{id}":                            map[string]any{"name": "pwned"},
		"PUT /api/orgs/{id}/budgets":                      map[string]any{"tool_calls_per_day": 1},
		"PUT /api/guilds/{id}/budgets":                    map[string]any{"tool_calls_per_day": 1},
		"PUT /api/agents/{id}/budgets":                    map[string]any{"tool_calls_per_day": 1},
		"POST /api/orgs/{id}/guilds":                      map[string]any{"name": "pwned"},
		"PATCH /api/guilds/{id}":                          map[string]any{"name": "pwned"},
		"POST /api/guilds/{id}/agents":                    map[string]any{"name": "pwned"},
		"PATCH /api/agents/{id}":                          map[string]any{"name": "pwned"},
		"PUT /api/orgs/{id}/model-keys/{provider}":        map[string]any{"key": "attacker-key"},
		"POST /api/agents/{id}/runs":                      map[string]any{"message": "hi"},
		"POST /api/orgs/{id}/collections":                 map[string]any{"name": "x", "columns": []map[string]any{{"name": "n", "type": "text"}}},
		"PATCH /api/collections/{id}":                     map[string]any{"name": "pwned"},
		"PUT /api/collections/{id}/grants":                map[string]any{"guild_id": attackerGuild, "access": "write"},
		"POST /api/collections/{id}/records":              map[string]any{"name": "x"},
		"PATCH /api/collections/{id}/records/{record_id}": map[string]any{"name": "x"},
		"PUT /api/agents/{id}/memory":                     map[string]any{"content": "pwned"},
		"PUT /api/agents/{id}/notes/{key}":                map[string]any{"content": "pwned"},
		"PUT /api/guilds/{id}/notes/{key}":                map[string]any{"content": "pwned"},
		"PUT /api/orgs/{id}/notes/{key}":                  map[string]any{"content": "pwned"},
		"POST /api/mcp/connections/{id}/call":             map[string]any{"tool": "echo", "arguments": map[string]any{"text": "x"}},
		"PUT /api/mcp/connections/{id}/pinned-prices":     map[string]any{"coins": []map[string]any{{"id": "bitcoin"}}},
		"PUT /api/mcp/connections/{id}/drive/folder":      map[string]any{"folder_id": "victim-folder"},
		"PATCH /api/admin/mcp/servers/{id}":               map[string]any{"name": "x"},
		"PUT /api/orgs/{id}/secrets/{name}":               map[string]any{"value": "attacker-value-123"},
		"PUT /api/guilds/{id}/secrets/{name}":             map[string]any{"value": "attacker-value-123"},
		"PUT /api/agents/{id}/secrets/{name}":             map[string]any{"value": "attacker-value-123"},
		"PUT /api/orgs/{id}/secrets/{name}/grants":        map[string]any{"scope": "agent", "scope_id": attackerAgent, "enabled": true},
		"PUT /api/guilds/{id}/secrets/{name}/grants":      map[string]any{"scope": "agent", "scope_id": attackerAgent, "enabled": true},
		"PUT /api/agents/{id}/secrets/{name}/grants":      map[string]any{"scope": "agent", "scope_id": attackerAgent, "enabled": true},
		"DELETE /api/orgs/{id}/secrets/{name}/grants":     map[string]any{"scope": "agent", "scope_id": attackerAgent},
		"DELETE /api/guilds/{id}/secrets/{name}/grants":   map[string]any{"scope": "agent", "scope_id": attackerAgent},
		"DELETE /api/agents/{id}/secrets/{name}/grants":   map[string]any{"scope": "agent", "scope_id": attackerAgent},
		"POST /api/secret-requests/{id}":                  map[string]any{"decline": true},
		"POST /api/approvals/{id}":                        map[string]any{"decision": "approve"},
		"POST /api/inputs/{id}":                           map[string]any{"action": "decline"},
		"PUT /api/mcp/connections/{id}/github/selected":   map[string]any{"repositories": []map[string]any{{"name": "x", "url": "https://github.com/victim/x"}}},
		"PUT /api/guilds/{id}/github/egress":              map[string]any{"enabled": false},
		"POST /api/guilds/{id}/repositories":              map[string]any{"url": "https://git.example.com/attacker/planted.git"},
		"POST /api/orgs/{id}/builder/coach":               map[string]any{"job": "plant a guild"},
		"POST /api/orgs/{id}/builder/accept":              map[string]any{"guild": map[string]any{"name": "pwned"}, "agents": []map[string]any{{"name": "A", "prompt": "x"}}},
	}
	victimToken, _, err := access.MintExpiring(context.Background(), me.DB, v.user, "victim", 0)
	if err != nil {
		t.Fatal(err)
	}
	idFor := func(path string) string {
		switch {
		case strings.HasPrefix(path, "/api/tokens/"):
			return victimToken.ID
		case strings.HasPrefix(path, "/api/orgs/"):
			return v.org
		case strings.HasPrefix(path, "/api/guilds/"):
			return v.guild
		case strings.HasPrefix(path, "/api/agents/"):
			return v.agent
		case strings.HasPrefix(path, "/api/collections/"):
			return v.collection
		case strings.HasPrefix(path, "/api/runs/"):
			return v.run
		case strings.HasPrefix(path, "/api/issues/"):
			return v.issue
		case strings.HasPrefix(path, "/api/schedules/"):
			return v.schedule
		case strings.HasPrefix(path, "/api/secret-requests/"):
			return v.secretRequest
		case strings.HasPrefix(path, "/api/approvals/"):
			return v.approval
		case strings.HasPrefix(path, "/api/inputs/"):
			return v.input
		case strings.HasPrefix(path, "/api/mcp/connections/"):
			return v.conn
		}
		return ""
	}

	before := fingerprint(t, me.Env)
	var ops []string
	for p, m := range doc.Paths {
		for method := range m {
			ops = append(ops, strings.ToUpper(method)+" "+p)
		}
	}
	sort.Strings(ops)
	probed := 0
	for _, opName := range ops {
		method, path, _ := strings.Cut(opName, " ")
		var probes []probe
		if !strings.Contains(path, "{") {
			list, ok := noID[opName]
			if !ok {
				t.Errorf("%s: no probe declared for this operation; add one", opName)
				continue
			}
			probes = list
		} else {
			id := idFor(path)
			admin := strings.HasPrefix(path, "/api/admin/") || strings.HasPrefix(path, "/api/users/") || strings.Contains(path, "/members/{user_id}")
			if id == "" && !admin {
				t.Errorf("%s: no victim id for this path; add one", opName)
				continue
			}
			if admin {
				id = v.org
				if strings.HasPrefix(path, "/api/users/") {
					id = v.user
				}
			}
			concrete := strings.NewReplacer("{id}", id, "{record_id}", v.record, "{subject_id}", v.guild,
				"{key}", "plan.md", "{provider}", "openrouter", "{user_id}", v.user, "{name}", "VICTIM_TOKEN",
				"{seq}", "1", "{idx}", "1").Replace(path)
			want := http.StatusNotFound
			if admin {
				want = http.StatusForbidden
			}
			probes = []probe{{concrete, bodies[opName], want}}
		}
		for _, pr := range probes {
			probed++
			var r apitest.Response
			if path == "/api/runs/{id}/events" {
				r = me.Do(op, method, pr.path, nil) // refused before the stream starts
			} else {
				r = me.Do(op, method, pr.path, pr.body)
			}
			if r.Status != pr.status {
				t.Errorf("%s %s: %d %s, want %d", method, pr.path, r.Status, r.Body, pr.status)
			}
			for _, leak := range []string{"victim plan", "victim memory", "victim issue", "victim reason", "Ada", "eth-victim", "sk-or-victim"} {
				if strings.Contains(string(r.Body), leak) {
					t.Errorf("%s %s: reply carries %q", method, pr.path, leak)
				}
			}
		}
	}
	for _, pr := range extra {
		r := me.Do(op, "POST", pr.path, pr.body)
		if r.Status < 400 {
			t.Errorf("POST %s with another organisation's id: %d %s", pr.path, r.Status, r.Body)
		}
	}
	after := fingerprint(t, me.Env)
	for tb, sum := range before {
		if after[tb] != sum {
			t.Errorf("table %s changed under another organisation's operator", tb)
		}
	}
	var orgsSeen []map[string]any
	me.Do(op, "GET", "/api/orgs", nil).JSON(&orgsSeen)
	if len(orgsSeen) != 1 || orgsSeen[0]["id"] != attackerOrg {
		t.Errorf("operator lists %v", orgsSeen)
	}
	var conns []map[string]any
	me.Do(op, "GET", "/api/mcp/connections", nil).JSON(&conns)
	if len(conns) != 0 {
		t.Errorf("operator lists another organisation's logins: %v", conns)
	}
	if probed < len(ops)-8 {
		t.Errorf("probed only %d operations of %d", probed, len(ops))
	}
}

// A platform login is visible to every operator (its tools are inherited
// downwards), but calling it directly through the Test route acts with the
// box's credential: that is the instance admin's alone.
func TestPlatformLoginTestCallIsAdminOnly(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-platform"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	path := "/api/mcp/connections/" + me.platformKeyLogin(t, "etherscan", "eth-platform") + "/call"
	body := `{"tool":"echo","arguments":{"text":"x"}}`
	for name, tok := range map[string]string{"operator": me.Operator(org), "user without organisation": me.Operator("")} {
		if r := me.Do(tok, "POST", path, body); r.Status != 403 || strings.Contains(string(r.Body), "echo: x") {
			t.Errorf("%s calling a platform login: %d %s", name, r.Status, r.Body)
		}
	}
	if r := me.Admin("POST", path, body); r.Status != 200 || !strings.Contains(string(r.Body), "echo: x") {
		t.Errorf("admin: %d %s", r.Status, r.Body)
	}
}

// Without PUBLIC_BASE_URL the OAuth redirect is built from the request's
// Host, which a client (or a proxy passing it through) controls: only a
// loopback host is trusted then, so the authorization code can never be sent
// to a host the attacker names.
func TestOAuthRedirectIgnoresAForgedHost(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	oauthFixture(t, me)
	org, _, _ := me.Hierarchy()
	connect := func(host string) apitest.Response {
		req, err := http.NewRequest("POST", me.HTTP.URL+"/api/mcp/connect",
			strings.NewReader(`{"slug":"notion","owner_scope":"organisation","owner_id":"`+org+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+me.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var raw json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&raw)
		return apitest.Response{Status: resp.StatusCode, Body: raw}
	}
	r := connect("evil.example")
	if r.Status != 422 || r.ErrorCode() != "public_base_url_required" || strings.Contains(string(r.Body), "evil.example") {
		t.Fatalf("forged host: %d %s", r.Status, r.Body)
	}
	if n := connectionstest.Count(t, me.DB); n != 0 {
		t.Fatalf("a refused connect left %d logins", n)
	}
	// A loopback name is the developer's own machine.
	port := me.HTTP.URL[strings.LastIndex(me.HTTP.URL, ":"):]
	r = connect("localhost" + port)
	if r.Status != 200 {
		t.Fatalf("localhost: %d %s", r.Status, r.Body)
	}
	authURL, _ := r.Map()["authorization_url"].(string)
	if got := mustQuery(t, authURL).Get("redirect_uri"); got != "http://localhost"+port+api.CallbackPath {
		t.Fatalf("redirect_uri %q", got)
	}
}
