package connectors

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// hierarchy is two organisations: A with guilds A1 (agents a1, a1b) and A2
// (agent a2), B with guild B1 (agent b1).
type hierarchy struct {
	orgA, orgB, guildA1, guildA2, guildB1, a1, a1b, a2, b1 uuid.UUID
}

func newHierarchy(t *testing.T, db *pgxpool.Pool) hierarchy {
	t.Helper()
	ctx := context.Background()
	q := func(sql string, args ...any) uuid.UUID {
		var id uuid.UUID
		if err := db.QueryRow(ctx, sql, args...).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	org := func(slug string) uuid.UUID {
		return q(`INSERT INTO organisations (name, slug) VALUES ($1, $1) RETURNING id`, slug)
	}
	guild := func(org uuid.UUID, name string) uuid.UUID {
		return q(`INSERT INTO guilds (organisation_id, name) VALUES ($1, $2) RETURNING id`, org, name)
	}
	agent := func(guild uuid.UUID, name string) uuid.UUID {
		return q(`INSERT INTO agents (guild_id, name) VALUES ($1, $2) RETURNING id`, guild, name)
	}
	var h hierarchy
	h.orgA, h.orgB = org("a"), org("b")
	h.guildA1, h.guildA2, h.guildB1 = guild(h.orgA, "a1"), guild(h.orgA, "a2"), guild(h.orgB, "b1")
	h.a1, h.a1b, h.a2, h.b1 = agent(h.guildA1, "a1"), agent(h.guildA1, "a1b"), agent(h.guildA2, "a2"), agent(h.guildB1, "b1")
	return h
}

// login is one stored credential owned at a scope.
type login struct {
	scope string
	owner *uuid.UUID
	cred  Credential
}

func (l login) values() []string { return l.cred.values() }
func cred(name string) Credential {
	return Credential{AccessToken: "AT-" + name, RefreshToken: "RT-" + name, TokenType: "Bearer",
		Extra: map[string]string{"api_secret": "X-" + name, "empty": ""}}
}

func TestRunSecretsFollowsTheAgentChain(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	h := newHierarchy(t, db)
	var serverID, other uuid.UUID
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, auth) VALUES ('svc', 'svc', 'http', 'token') RETURNING id`).Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, auth) VALUES ('other', 'other', 'http', 'oauth') RETURNING id`).Scan(&other); err != nil {
		t.Fatal(err)
	}
	ptr := func(id uuid.UUID) *uuid.UUID { return &id }
	logins := map[string]login{
		"platform":   {"platform", nil, cred("platform")},
		"orgA":       {"organisation", ptr(h.orgA), cred("orgA")},
		"guildA1":    {"guild", ptr(h.guildA1), cred("guildA1")},
		"a1":         {"agent", ptr(h.a1), cred("a1")},
		"a1b":        {"agent", ptr(h.a1b), cred("a1b")},
		"guildA2":    {"guild", ptr(h.guildA2), cred("guildA2")},
		"a2":         {"agent", ptr(h.a2), cred("a2")},
		"orgB":       {"organisation", ptr(h.orgB), cred("orgB")},
		"guildB1":    {"guild", ptr(h.guildB1), cred("guildB1")},
		"b1":         {"agent", ptr(h.b1), cred("b1")},
		"a1 (oauth)": {"agent", ptr(h.a1), Credential{AccessToken: "AT-a1-oauth", RefreshToken: "RT-a1-oauth"}},
	}
	for name, l := range logins {
		srv := serverID
		if name == "a1 (oauth)" {
			srv = other
		}
		owner := ""
		if l.owner != nil {
			owner = l.owner.String()
		}
		id := uuid.MustParse(connectionstest.Insert(t, db, srv.String(), l.scope, owner))
		if _, err := putCredential(ctx, db, kr, id, l.cred, ""); err != nil {
			t.Fatal(err)
		}
	}
	// A pending login of the chain has no credential row: nothing to add.
	connectionstest.Insert(t, db, other.String(), "guild", h.guildA1.String())

	eng, err := New(ctx, Options{DB: db, Keyring: kr, Connectors: []Ref{{Provider: "svc"}}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	if !eng.InUse() {
		t.Fatal("engine not in use")
	}

	want := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, logins[n].values()...)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		agent uuid.UUID
		want  []string
	}{
		{h.a1, want("platform", "orgA", "guildA1", "a1", "a1 (oauth)")},
		{h.a1b, want("platform", "orgA", "guildA1", "a1b")},
		{h.a2, want("platform", "orgA", "guildA2", "a2")},
		{h.b1, want("platform", "orgB", "guildB1", "b1")},
		{uuid.New(), nil}, // no such agent
	} {
		t.Run(tc.agent.String(), func(t *testing.T) {
			got, err := eng.RunSecrets(ctx, tc.agent.String())
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("RunSecrets = %v\nwant       %v", got, tc.want)
			}
			if slices.Contains(got, "") {
				t.Fatal("an empty value would redact every result")
			}
		})
	}
	if len(want("a1")) != 3 {
		t.Fatalf("a login's values are access, refresh and its non-empty extras: %v", want("a1"))
	}
}

// An engine not in use answers nothing and never queries the database.
func TestRunSecretsNotInUse(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testdb.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	for name, db := range map[string]*pgxpool.Pool{"with a database": pool, "without one": nil} {
		t.Run(name, func(t *testing.T) {
			eng, err := New(ctx, Options{DB: db, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			if eng.InUse() {
				t.Fatal("engine in use")
			}
			got, err := eng.RunSecrets(ctx, uuid.NewString())
			if err != nil || got != nil {
				t.Fatalf("RunSecrets = %v, %v", got, err)
			}
			if db != nil {
				if n := db.Stat().AcquireCount(); n != 0 {
					t.Fatalf("%d connections acquired", n)
				}
			}
		})
	}
}

func TestRefFromConfig(t *testing.T) {
	for _, tc := range []struct {
		slug, cfg string
		want      string
	}{
		{"gmail", `{"provider":"google","sub_service":"gmail"}`, "google/gmail"},
		{"notion", `{"provider":"oauth2"}`, "oauth2"},
		{"coingecko", `{}`, "coingecko"},
		{"etherscan", ``, "etherscan"},
		{"broken", `{`, "broken"},
	} {
		if got := RefFromConfig(tc.slug, []byte(tc.cfg)).String(); got != tc.want {
			t.Errorf("RefFromConfig(%s, %s) = %s, want %s", tc.slug, tc.cfg, got, tc.want)
		}
	}
}
