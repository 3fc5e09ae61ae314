package githubapp_test

import (
	"context"
	"testing"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/githubapp"
)

// A narrower scope works on the wider login's selection until it connects a
// login of its own and picks a set; a pending login inherits.
func TestSelectionInheritsUntilANarrowerLoginSelects(t *testing.T) {
	e := newGenEnv(t) // a connected guild login selecting acme-gh/api
	ctx := context.Background()
	orgLogin := connectionstest.InsertOf(t, e.db, "github", "organisation", e.agent.OrgID)
	connectionstest.SetConnected(t, e.db, orgLogin, "acme-gh")
	orgSel := []githubapp.Selected{{GitHubID: 1, Name: "org-wide", URL: "https://github.com/acme-gh/org-wide"}}
	if err := githubapp.SaveLogin(ctx, e.db, orgLogin, e.inst, "acme-gh"); err != nil {
		t.Fatal(err)
	}
	if err := githubapp.SetSelected(ctx, e.db, orgLogin, orgSel); err != nil {
		t.Fatal(err)
	}
	eff, err := githubapp.EffectiveSelection(ctx, e.db, e.agent.OrgID, e.agent.GuildID, e.agent.ID)
	if err != nil || eff.ConnectionID != e.conn {
		t.Fatalf("the guild's own selection should win: %+v %v", eff, err)
	}
	// An agent login that is still pending inherits the guild's.
	agentLogin := connectionstest.InsertOf(t, e.db, "github", "agent", e.agent.ID)
	if eff, _ := githubapp.EffectiveSelection(ctx, e.db, e.agent.OrgID, e.agent.GuildID, e.agent.ID); eff.ConnectionID != e.conn {
		t.Fatalf("a pending agent login took over: %+v", eff)
	}
	// A disconnected guild login with a selection is not skipped for the
	// organisation's: the generation that needs it fails instead.
	connectionstest.SetDisconnected(t, e.db, e.conn)
	if eff, _ := githubapp.EffectiveSelection(ctx, e.db, e.agent.OrgID, e.agent.GuildID, e.agent.ID); eff.ConnectionID != e.conn || eff.Status != "disconnected" {
		t.Fatalf("a disconnected login was skipped: %+v", eff)
	}
	connectionstest.SetConnected(t, e.db, e.conn, "acme-gh")
	// Connected without a selection: still inherits.
	connectionstest.SetConnected(t, e.db, agentLogin, "acme-gh")
	if err := githubapp.SaveLogin(ctx, e.db, agentLogin, e.inst, "acme-gh"); err != nil {
		t.Fatal(err)
	}
	if eff, _ := githubapp.EffectiveSelection(ctx, e.db, e.agent.OrgID, e.agent.GuildID, e.agent.ID); eff.ConnectionID != e.conn {
		t.Fatalf("an agent login without a selection took over: %+v", eff)
	}
	if err := githubapp.SetSelected(ctx, e.db, agentLogin, orgSel); err != nil {
		t.Fatal(err)
	}
	if eff, _ := githubapp.EffectiveSelection(ctx, e.db, e.agent.OrgID, e.agent.GuildID, e.agent.ID); eff.ConnectionID != agentLogin {
		t.Fatalf("the agent's own selection: %+v", eff)
	}
	// Without the guild's login, the guild inherits the organisation's.
	connectionstest.Delete(t, e.db, e.conn)
	if eff, _ := githubapp.EffectiveSelection(ctx, e.db, e.agent.OrgID, e.agent.GuildID, ""); eff.ConnectionID != orgLogin {
		t.Fatalf("the guild inherits: %+v", eff)
	}
	if repos, _ := githubapp.GuildRepositories(ctx, e.db, e.agent.GuildID); len(repos) != 0 {
		t.Fatalf("deleting the guild login left its repositories: %+v", repos)
	}
}
