package githubapp_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/githubapp/gittokens"
)

// openings records the agents whose GitHub socket was opened.
type openings struct {
	mu     sync.Mutex
	agents []string
}

func (o *openings) OpenGitHub(agentID string) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.agents = append(o.agents, agentID)
	return "/run/guilds-proxy/git.sock", nil
}

func (o *openings) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.agents)
}

// A generation with GitHub repositories opens the agent's way to GitHub
// and names it in the tokens file; each shell call opens it again (it
// closes when idle). An agent without repositories gets neither, and a
// worker that did not prepare the generation finds out from the database.
func TestGenerationNamesTheProxyOnlyForAgentsWithRepositories(t *testing.T) {
	e := newGenEnv(t)
	ctx := context.Background()
	egress := &openings{}
	e.g.Egress = egress
	if _, err := e.g.Prepare(ctx, e.agent); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(e.host(t, gittokens.Path))
	var f gittokens.File
	if err != nil || json.Unmarshal(raw, &f) != nil || f.Proxy != gittokens.ProxyURL || f.ProxySocket != "/run/guilds-proxy/git.sock" {
		t.Fatalf("tokens file %s %v", raw, err)
	}
	if !slices.Equal(egress.agents, []string{e.agent.ID}) {
		t.Fatalf("opened for %v", egress.agents)
	}
	load := func(context.Context) (githubapp.Agent, error) { return e.agent, nil }
	if err := e.g.BeforeShell(ctx, e.agent.ID, load); err != nil || egress.count() != 2 {
		t.Fatalf("before a shell call: %v, %d openings", err, egress.count())
	}
	// Another worker (restarted) asks the database once, and issues a token
	// for its route, which holds none yet.
	other := &githubapp.Generations{DB: e.db, Egress: egress, Keyring: e.keyring, Workspace: e.ws, App: e.g.App}
	issued := len(e.gh.TokenRequests)
	for range 2 {
		if err := other.BeforeShell(ctx, e.agent.ID, load); err != nil {
			t.Fatal(err)
		}
	}
	if egress.count() != 5 || len(e.gh.TokenRequests) != issued+1 {
		t.Fatalf("after a restart: %d openings, %d tokens issued", egress.count(), len(e.gh.TokenRequests)-issued)
	}

	// An agent of another guild, without repositories.
	var lone githubapp.Agent
	if err := e.db.QueryRow(ctx, `WITH g AS (INSERT INTO guilds (organisation_id, name) VALUES ($1, 'Other') RETURNING id, organisation_id)
INSERT INTO agents (guild_id, name) SELECT id, 'Writer' FROM g RETURNING id::text, guild_id::text, (SELECT organisation_id::text FROM g)`,
		e.agent.OrgID).Scan(&lone.ID, &lone.GuildID, &lone.OrgID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.g.Prepare(ctx, lone); err != nil {
		t.Fatal(err)
	}
	if err := e.g.BeforeShell(ctx, lone.ID, func(context.Context) (githubapp.Agent, error) { return lone, nil }); err != nil {
		t.Fatal(err)
	}
	if egress.count() != 5 {
		t.Fatalf("an agent without repositories opened the way to GitHub: %v", egress.agents)
	}
}

func TestEgressHosts(t *testing.T) {
	hosts, private, err := githubapp.EgressHosts("", "")
	if err != nil || private || !slices.Equal(hosts, []string{"github.com:443", "api.github.com:443", "codeload.github.com:443", "objects.githubusercontent.com:443"}) {
		t.Errorf("github.com: %v %v %v", hosts, private, err)
	}
	hosts, private, err = githubapp.EgressHosts("https://GHE.example.com/", "https://ghe.example.com/api/v3")
	if err != nil || !private || !slices.Equal(hosts, []string{"ghe.example.com:443"}) {
		t.Errorf("an Enterprise Server: %v %v %v", hosts, private, err)
	}
	hosts, _, err = githubapp.EgressHosts("http://10.0.0.5:8080", "http://10.0.0.5:8080/api")
	if err != nil || !slices.Equal(hosts, []string{"10.0.0.5:8080"}) {
		t.Errorf("a local GitHub: %v %v", hosts, err)
	}
	if _, _, err := githubapp.EgressHosts("ftp://x", ""); err == nil || !strings.Contains(err.Error(), githubapp.EnvWebURL) {
		t.Errorf("a bad URL: %v", err)
	}
}
