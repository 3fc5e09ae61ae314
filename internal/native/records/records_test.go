package records_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/native/records"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

type env struct {
	t                   *testing.T
	db                  *pgxpool.Pool
	reg                 *tools.Registry
	org, guild, guild2  string
	agent, agent2, peer string // agent and peer in guild; agent2 in guild2
}

func newEnv(t *testing.T) *env {
	t.Helper()
	t.Parallel()
	db := testdb.New(t)
	e := &env{t: t, db: db, reg: tools.NewRegistry(tools.WithLogger(slog.New(slog.DiscardHandler)))}
	records.Register(e.reg, records.Deps{DB: db})
	ctx := context.Background()
	q := func(sql string, args ...any) string {
		var id string
		if err := db.QueryRow(ctx, sql, args...).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	e.org = q(`INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`)
	e.guild = q(`INSERT INTO guilds (organisation_id, name) VALUES ($1, 'sales') RETURNING id`, e.org)
	e.guild2 = q(`INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, e.org)
	e.agent = q(`INSERT INTO agents (guild_id, name) VALUES ($1, 'alice') RETURNING id`, e.guild)
	e.peer = q(`INSERT INTO agents (guild_id, name) VALUES ($1, 'bob') RETURNING id`, e.guild)
	e.agent2 = q(`INSERT INTO agents (guild_id, name) VALUES ($1, 'carol') RETURNING id`, e.guild2)
	return e
}

var leadColumns = []records.Column{
	{Name: "name", Type: records.TypeText, Required: true},
	{Name: "email", Type: records.TypeText, Unique: true},
	{Name: "score", Type: records.TypeNumber},
	{Name: "met_at", Type: records.TypeDatetime},
	{Name: "active", Type: records.TypeBoolean},
	{Name: "crm_id", Type: records.TypeID},
	{Name: "stage", Type: records.TypeEnum, Values: []string{"new", "won", "lost"}},
	{Name: "tags", Type: records.TypeTextArray},
	{Name: "channels", Type: records.TypeEnumArray, Values: []string{"mail", "phone"}},
}

// collection defines an organisation table (guildID "") or a guild's own table.
func (e *env) collection(name, guildID string, cols []records.Column) records.Collection {
	e.t.Helper()
	in := records.CollectionInput{Name: &name, Columns: &cols}
	if guildID != "" {
		in.GuildID = &guildID
	}
	c, err := records.CreateCollection(context.Background(), e.db, e.org, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) grant(c records.Collection, guildID, agentID string, a records.Access) {
	e.t.Helper()
	in := records.GrantInput{Access: a}
	if guildID != "" {
		in.GuildID = &guildID
	} else {
		in.AgentID = &agentID
	}
	if _, err := records.PutGrant(context.Background(), e.db, c, in); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) call(agent, tool string, args any) string {
	e.t.Helper()
	b, _ := json.Marshal(args)
	return e.reg.Invoke(context.Background(), tools.Call{Name: tool, Args: b, AgentID: agent, RunID: "run-1"})
}

func (e *env) ok(agent, tool string, args any) map[string]any {
	e.t.Helper()
	out := e.call(agent, tool, args)
	if strings.HasPrefix(out, "ERROR") {
		e.t.Fatalf("%s: %s", tool, out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		e.t.Fatalf("%s: not JSON: %s", tool, out)
	}
	return m
}

func (e *env) fails(agent, tool string, args any, want string) {
	e.t.Helper()
	out := e.call(agent, tool, args)
	if !strings.HasPrefix(out, "ERROR: ") || !strings.Contains(out, want) {
		e.t.Fatalf("%s: want an ERROR containing %q, got %s", tool, want, out)
	}
}

func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func values(m map[string]any) map[string]any {
	return m["record"].(map[string]any)["values"].(map[string]any)
}

func TestAddValidatesEveryValueAtOnce(t *testing.T) {
	e := newEnv(t)
	c := e.collection("leads", "", leadColumns)
	e.grant(c, e.guild, "", records.AccessWrite)

	out := e.call(e.agent, "record_add", map[string]any{"collection": "leads", "body": map[string]any{
		"score": "high", "met_at": "yesterday", "active": "yes", "stage": "maybe",
		"tags": "a", "channels": []string{"fax"}, "crm_id": "", "bogus": 1,
	}})
	if !strings.HasPrefix(out, "ERROR: 422 record rejected: ") {
		t.Fatalf("got %s", out)
	}
	for _, want := range []string{"name: required", "score: must be a number", "met_at: must be an ISO 8601",
		"active: must be true or false", `stage: must be one of "new", "won", "lost"`, "tags: must be an array",
		`channels: item "fax"`, "crm_id: must be a non-empty id", `bogus: not a column of "leads"`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in %s", want, out)
		}
	}
	if n := e.count(`SELECT count(*) FROM records`); n != 0 {
		t.Fatalf("a rejected add wrote %d records", n)
	}

	m := e.ok(e.agent, "record_add", map[string]any{"collection": "leads", "body": map[string]any{
		"name": "Ada Lovelace", "email": "ada@example.com", "score": 4.5, "met_at": "2025-01-31",
		"active": true, "crm_id": "C-1", "stage": "new", "tags": []string{"vip", "math"}, "channels": []string{"mail", "mail"},
	}})
	rec := m["record"].(map[string]any)
	if rec["collection"] != "leads" || rec["id"] == "" || m["note"] != nil {
		t.Fatalf("record %v", m)
	}
	v := values(m)
	if v["met_at"] != "2025-01-31T00:00:00Z" || len(v["channels"].([]any)) != 1 || v["score"] != 4.5 {
		t.Fatalf("normalised values %v", v)
	}
}

func TestAddMergesOnUniqueColumn(t *testing.T) {
	e := newEnv(t)
	c := e.collection("leads", "", leadColumns)
	e.grant(c, e.guild, "", records.AccessWrite)
	first := e.ok(e.agent, "record_add", map[string]any{"collection": "leads", "body": map[string]any{"name": "Ada", "email": "Ada@Example.com", "score": 1}})
	id := first["record"].(map[string]any)["id"].(string)
	m := e.ok(e.agent, "record_add", map[string]any{"collection": "leads", "body": map[string]any{"name": "Ada L.", "email": " ada@example.com", "stage": "won"}})
	if m["note"] != "merged into existing record "+id || m["record"].(map[string]any)["id"] != id {
		t.Fatalf("merge: %v", m)
	}
	v := values(m)
	if v["name"] != "Ada L." || v["stage"] != "won" || v["score"] != 1.0 {
		t.Fatalf("merged values %v", v)
	}
	// A removed record no longer holds the value: a new add creates a new record.
	e.ok(e.agent, "record_remove", map[string]any{"collection": "leads", "id": id})
	m = e.ok(e.agent, "record_add", map[string]any{"collection": "leads", "body": map[string]any{"name": "Ada", "email": "ada@example.com"}})
	if m["note"] != nil || m["record"].(map[string]any)["id"] == id {
		t.Fatalf("add after remove: %v", m)
	}
}

func TestUpdateAndRemove(t *testing.T) {
	e := newEnv(t)
	c := e.collection("leads", "", leadColumns)
	e.grant(c, e.guild, "", records.AccessWrite)
	id := e.ok(e.agent, "record_add", map[string]any{"collection": "leads", "body": map[string]any{"name": "Ada", "email": "a@x.io", "score": 3}})["record"].(map[string]any)["id"].(string)
	e.ok(e.agent, "record_add", map[string]any{"collection": "leads", "body": map[string]any{"name": "Bob", "email": "b@x.io"}})

	m := e.ok(e.agent, "record_update", map[string]any{"collection": "leads", "id": id, "body": map[string]any{"score": nil, "stage": "won", "name": "Ada"}})
	v := values(m)
	if _, has := v["score"]; has || v["stage"] != "won" {
		t.Fatalf("update %v", m)
	}
	if w := m["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(string), "name already had this value") {
		t.Fatalf("warnings %v", m["warnings"])
	}
	// Rejections change nothing.
	before := e.count(`SELECT count(*) FROM records WHERE data->>'stage' = 'won'`)
	e.fails(e.agent, "record_update", map[string]any{"collection": "leads", "id": id, "body": map[string]any{"name": nil, "stage": "bad"}}, "422 record rejected: name: required, cannot be null; stage: must be one of")
	e.fails(e.agent, "record_update", map[string]any{"collection": "leads", "id": id, "body": map[string]any{"email": "B@x.io"}}, "409")
	if after := e.count(`SELECT count(*) FROM records WHERE data->>'stage' = 'won' AND data->>'email' = 'a@x.io'`); after != before {
		t.Fatal("a rejected update changed the record")
	}
	e.fails(e.agent, "record_update", map[string]any{"collection": "leads", "id": "00000000-0000-0000-0000-000000000000", "body": map[string]any{"stage": "new"}}, "404 record")
	e.fails(e.agent, "record_update", map[string]any{"collection": "leads", "id": "not-a-uuid", "body": map[string]any{"stage": "new"}}, "404 record")

	r := e.ok(e.agent, "record_remove", map[string]any{"collection": "leads", "id": id})
	if r["removed"].(map[string]any)["id"] != id {
		t.Fatalf("remove %v", r)
	}
	e.fails(e.agent, "record_remove", map[string]any{"collection": "leads", "id": id}, "404 record")
	e.fails(e.agent, "record_update", map[string]any{"collection": "leads", "id": id, "body": map[string]any{"stage": "new"}}, "404 record")
	if n := e.count(`SELECT count(*) FROM records WHERE id = $1 AND deleted_at IS NOT NULL`, id); n != 1 {
		t.Fatal("remove is not a soft delete")
	}
	l := e.ok(e.agent, "record_list", map[string]any{"collection": "leads"})
	if l["total"].(float64) != 1 {
		t.Fatalf("list after remove %v", l)
	}
}

func TestGrants(t *testing.T) {
	e := newEnv(t)
	orgTable := e.collection("leads", "", leadColumns)
	own := e.collection("sales_log", e.guild, []records.Column{{Name: "entry", Type: records.TypeText}})
	other := e.collection("ops_log", e.guild2, []records.Column{{Name: "entry", Type: records.TypeText}})
	add := func(coll string) map[string]any {
		if coll == "leads" {
			return map[string]any{"collection": coll, "body": map[string]any{"name": "x"}}
		}
		return map[string]any{"collection": coll, "body": map[string]any{"entry": "x"}}
	}

	// Ungranted organisation table, another guild's table, a missing table: 404.
	e.fails(e.agent, "record_list", map[string]any{"collection": "leads"}, `404 collection "leads" not found`)
	e.fails(e.agent, "record_list", map[string]any{"collection": "ops_log"}, `404 collection "ops_log" not found`)
	e.fails(e.agent, "record_add", add("nope"), `404 collection "nope" not found`)
	// The refusal names what the agent can use, and nothing it cannot reach.
	if out := e.call(e.agent, "record_list", map[string]any{"collection": "leads"}); !strings.HasSuffix(out, "collections this agent can use: sales_log (write)") {
		t.Fatalf("404 without the usable collections: %s", out)
	}
	if out := e.call(e.agent2, "record_search", map[string]any{"query": "x", "collection": "sales_log"}); !strings.HasSuffix(out, "collections this agent can use: ops_log (write)") {
		t.Fatalf("404 names another guild's table: %s", out)
	}
	// The guild's own table: write by default.
	e.ok(e.agent, "record_add", add("sales_log"))
	e.fails(e.agent2, "record_add", add("sales_log"), "404")

	// Guild read on the organisation table: read yes, write 403.
	e.grant(orgTable, e.guild, "", records.AccessRead)
	e.ok(e.agent, "record_list", map[string]any{"collection": "leads"})
	zero := "00000000-0000-0000-0000-000000000000"
	for tool, args := range map[string]map[string]any{
		"record_add":    {"collection": "leads", "body": map[string]any{"name": "x"}},
		"record_update": {"collection": "leads", "id": zero, "body": map[string]any{"name": "x"}},
		"record_remove": {"collection": "leads", "id": zero},
	} {
		e.fails(e.agent, tool, args, `403 collection "leads" is granted read-only`)
	}
	if n := e.count(`SELECT count(*) FROM records WHERE collection_id = $1`, orgTable.ID); n != 0 {
		t.Fatal("a refused write wrote")
	}
	// The agent's own row wins over its guild's: write for alice, none keeps bob out.
	e.grant(orgTable, "", e.agent, records.AccessWrite)
	e.grant(orgTable, "", e.peer, records.AccessNone)
	e.ok(e.agent, "record_add", add("leads"))
	e.fails(e.peer, "record_list", map[string]any{"collection": "leads"}, "404")
	// An agent row opens another guild's table, and none closes the agent's own guild table.
	e.grant(other, "", e.agent, records.AccessRead)
	e.ok(e.agent, "record_list", map[string]any{"collection": "ops_log"})
	e.grant(own, "", e.peer, records.AccessNone)
	e.fails(e.peer, "record_list", map[string]any{"collection": "sales_log"}, "404")
	// A guild grant for another guild on a guild's own table is refused.
	g2 := e.guild2
	if _, err := records.PutGrant(context.Background(), e.db, own, records.GrantInput{GuildID: &g2, Access: records.AccessRead}); err == nil {
		t.Fatal("a foreign guild grant on a guild table was accepted")
	}
	// Search without collection sees only reachable collections.
	m := e.ok(e.peer, "record_search", map[string]any{"query": "x"})
	for _, r := range m["records"].([]any) {
		if r.(map[string]any)["collection"] != "leads" && r.(map[string]any)["collection"] != "sales_log" {
			t.Fatalf("peer reached %v", r)
		}
	}
	if len(m["records"].([]any)) != 0 {
		t.Fatalf("peer sees %v", m)
	}
	e.fails(e.peer, "record_add", add("leads"), `404 collection "leads" not found; no collection is granted to this agent`)
	m = e.ok(e.agent, "record_search", map[string]any{"query": "x"})
	if len(m["records"].([]any)) != 2 {
		t.Fatalf("alice sees %v", m)
	}
}

func seedLeads(e *env) {
	e.t.Helper()
	c := e.collection("leads", "", leadColumns)
	e.grant(c, e.guild, "", records.AccessWrite)
	for _, b := range []map[string]any{
		{"name": "Ada Lovelace", "email": "ada@analytical.org", "score": 9, "met_at": "2025-01-10T10:00:00Z", "active": true, "crm_id": "C-1", "stage": "won", "tags": []string{"math", "engines"}, "channels": []string{"mail"}},
		{"name": "Charles Babbage", "email": "charles@engines.co.uk", "score": 7, "met_at": "2025-02-10T10:00:00Z", "active": false, "crm_id": "C-2", "stage": "new", "tags": []string{"engines"}},
		{"name": "Grace Hopper", "email": "grace@navy.mil", "score": 8, "met_at": "2025-03-10T10:00:00Z", "active": true, "crm_id": "C-3", "stage": "lost", "tags": []string{"compilers", "cobol"}, "channels": []string{"phone"}},
		{"name": "Alan Turing", "score": 10, "stage": "new"},
	} {
		e.ok(e.agent, "record_add", map[string]any{"collection": "leads", "body": b})
	}
}

func names(m map[string]any) []string {
	var out []string
	for _, r := range m["records"].([]any) {
		out = append(out, r.(map[string]any)["values"].(map[string]any)["name"].(string))
	}
	return out
}

func TestSearchGrammar(t *testing.T) {
	e := newEnv(t)
	seedLeads(e)
	search := func(q string, extra ...any) []string {
		args := map[string]any{"query": q}
		if len(extra) == 2 {
			args[extra[0].(string)] = extra[1]
		}
		return names(e.ok(e.agent, "record_search", args))
	}
	cases := []struct {
		q    string
		want []string
	}{
		{"hopper", []string{"Grace Hopper"}},                          // one word
		{"engin", []string{"Charles Babbage", "Ada Lovelace"}},        // a single token is a substring
		{"analytical.org", []string{"Ada Lovelace"}},                  // punctuation inside a single token
		{"ada lovelace", []string{"Ada Lovelace"}},                    // all words
		{`"grace hopper"`, []string{"Grace Hopper"}},                  // phrase
		{`"hopper grace"`, nil},                                       // phrase order matters
		{"turing or hopper", []string{"Alan Turing", "Grace Hopper"}}, // newest change first
		{"engines -charles", []string{"Ada Lovelace"}},                // exclusion
		{"hoper", nil}, // never fuzzy
		{"ada, lovelace!", []string{"Ada Lovelace"}}, // punctuation between words
		{"100%", nil}, // LIKE wildcards are literal
	}
	for _, c := range cases {
		got := search(c.q)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("search %q = %v, want %v", c.q, got, c.want)
		}
	}
	e.fails(e.agent, "record_search", map[string]any{"query": "  "}, "422 query is required")
	e.fails(e.agent, "record_search", map[string]any{"query": "!!! ?"}, "no letters or digits")
	e.fails(e.agent, "record_search", map[string]any{"query": "ada", "where": map[string]any{"stage": "won"}}, "where needs collection")
	got := names(e.ok(e.agent, "record_search", map[string]any{"query": "engines", "collection": "leads", "where": map[string]any{"stage": "new"}}))
	if strings.Join(got, "|") != "Charles Babbage" {
		t.Errorf("search with where %v", got)
	}
}

func TestListWhere(t *testing.T) {
	e := newEnv(t)
	seedLeads(e)
	list := func(args map[string]any) map[string]any {
		args["collection"] = "leads"
		return e.ok(e.agent, "record_list", args)
	}
	where := func(w map[string]any) []string {
		return names(list(map[string]any{"where": w, "order": map[string]any{"column": "name"}}))
	}
	cases := []struct {
		w    map[string]any
		want string
	}{
		{map[string]any{"name": "lovel"}, "Ada Lovelace"},                  // substring
		{map[string]any{"name": "Lovelase"}, "Ada Lovelace"},               // similar spelling
		{map[string]any{"tags": "compil"}, "Grace Hopper"},                 // open array item by substring
		{map[string]any{"tags": "engins"}, "Ada Lovelace|Charles Babbage"}, // open array item by spelling
		{map[string]any{"stage": "new"}, "Alan Turing|Charles Babbage"},    // fixed values exactly
		{map[string]any{"channels": "phone"}, "Grace Hopper"},              // fixed-value array
		{map[string]any{"score": 8}, "Grace Hopper"},                       // number exactly
		{map[string]any{"score": map[string]any{"gte": 8, "lte": 9}}, "Ada Lovelace|Grace Hopper"},
		{map[string]any{"met_at": "2025-02-10T11:00:00+01:00"}, "Charles Babbage"}, // datetime exactly, any zone
		{map[string]any{"met_at": map[string]any{"gte": "2025-02-01"}}, "Charles Babbage|Grace Hopper"},
		{map[string]any{"active": false}, "Charles Babbage"},
		{map[string]any{"crm_id": "C-3"}, "Grace Hopper"},
		{map[string]any{"crm_id": "C"}, ""}, // ids match exactly only
		{map[string]any{"email": nil}, "Alan Turing"},
		{map[string]any{"stage": "new", "score": map[string]any{"gte": 8}}, "Alan Turing"},
	}
	for _, c := range cases {
		if got := strings.Join(where(c.w), "|"); got != c.want {
			t.Errorf("where %v = %q, want %q", c.w, got, c.want)
		}
	}
	// Rejected where terms, all reported.
	out := e.call(e.agent, "record_list", map[string]any{"collection": "leads", "where": map[string]any{
		"stage": "maybe", "active": "yes", "nope": 1, "name": map[string]any{"gte": 1}}})
	for _, want := range []string{"422 where rejected", "stage: must be one of", "active: must be true or false", `nope: not a column`, "name: a {gte, lte} range"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in %s", want, out)
		}
	}
	nine := map[string]any{}
	for i, n := range []string{"name", "email", "score", "met_at", "active", "crm_id", "stage", "tags", "channels"} {
		nine[n] = i
	}
	e.fails(e.agent, "record_list", map[string]any{"collection": "leads", "where": nine}, "at most 8")

	// Empty narrowed result carries the hint.
	m := list(map[string]any{"where": map[string]any{"name": "zzzzqqq"}})
	h := m["hint"].(map[string]any)
	if m["total"].(float64) != 0 || h["size"].(float64) != 4 || h["newest_change"] == nil || len(h["columns"].([]any)) != len(leadColumns) {
		t.Fatalf("hint %v", m)
	}
	if m := list(map[string]any{}); m["hint"] != nil || m["total"].(float64) != 4 {
		t.Fatalf("plain list %v", m)
	}

	// Paging, ordering, totals.
	m = list(map[string]any{"order": map[string]any{"column": "score", "direction": "desc"}, "limit": 2, "offset": 1})
	if got := strings.Join(names(m), "|"); got != "Ada Lovelace|Grace Hopper" || m["total"].(float64) != 4 {
		t.Fatalf("page %q %v", got, m["total"])
	}
	if m := list(map[string]any{"offset": 10}); m["total"].(float64) != 4 || len(m["records"].([]any)) != 0 {
		t.Fatalf("offset past the end %v", m)
	}
	e.fails(e.agent, "record_list", map[string]any{"collection": "leads", "order": map[string]any{"column": "tags"}}, "order.column")
	e.fails(e.agent, "record_list", map[string]any{"collection": "leads", "limit": 101}, "")
	if m := list(map[string]any{"order": map[string]any{"column": "met_at", "direction": "asc"}}); strings.Join(names(m), "|") != "Ada Lovelace|Charles Babbage|Grace Hopper|Alan Turing" {
		t.Fatalf("order by datetime %v", names(m))
	}

	// since: oldest change first, only changes at or after the time.
	all := list(map[string]any{"since": "2000-01-01T00:00:00Z"})
	if strings.Join(names(all), "|") != "Ada Lovelace|Charles Babbage|Grace Hopper|Alan Turing" {
		t.Fatalf("since order %v", names(all))
	}
	e.fails(e.agent, "record_list", map[string]any{"collection": "leads", "since": "last week"}, "since must be")
	m = list(map[string]any{"since": "2999-01-01T00:00:00Z"})
	if m["total"].(float64) != 0 || m["hint"] == nil {
		t.Fatalf("since future %v", m)
	}
}
