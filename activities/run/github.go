package run

import (
	"context"
	"errors"

	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
)

// Repositories gives a coding agent's generation its GitHub repositories
// at start: tokens in the sandbox, clones under /home/agent/repos
// (githubapp.Generations).
type Repositories interface {
	Prepare(ctx context.Context, a githubapp.Agent) (githubapp.Prepared, error)
	// End runs when a run of the agent ends: its GitHub tokens are revoked.
	End(ctx context.Context, agentID string) error
}

// endRepositories revokes the GitHub tokens of the finished run's agent. A
// failure is logged, not the run's: the tokens expire within the hour.
func (a *Activities) endRepositories(ctx context.Context, runID string) {
	if a.d.Repositories == nil {
		return
	}
	r, err := runs.Load(ctx, a.d.DB, runID)
	if err == nil {
		err = a.d.Repositories.End(ctx, r.AgentID)
	}
	if err != nil {
		a.d.Log.WarnContext(ctx, "github: the run's tokens were not revoked; they expire on their own", "run_id", runID, "err", err)
	}
}

// generationStart reports whether a model turn starts a generation: the
// run's first turn, or the first after a user message.
func generationStart(history []runs.Message) bool {
	return len(history) == 0 || history[len(history)-1].Role == runs.RoleUser
}

// prepareRepositories runs at a coding generation's start. A repository
// that cannot be reached (its login disconnected, the installation removed
// or suspended, a repository it no longer reaches) fails the generation at
// start with a message that names it.
func (a *Activities) prepareRepositories(ctx context.Context, agent orgs.Agent, snap runs.Snapshot, history []runs.Message) error {
	if a.d.Repositories == nil || !snap.Flags.Coding || !generationStart(history) {
		return nil
	}
	p, err := a.d.Repositories.Prepare(ctx, githubapp.Agent{ID: agent.ID, GuildID: agent.GuildID, OrgID: agent.OrganisationID})
	var refused *githubapp.RefusedError
	if errors.As(err, &refused) {
		return nonRetryable(ErrTypeStartRefused, err)
	}
	if err != nil {
		return err
	}
	if p.Repositories > 0 {
		a.d.Log.InfoContext(ctx, "generation repositories ready", "run_id", snap.RunID, "repositories", p.Repositories)
	}
	return nil
}
