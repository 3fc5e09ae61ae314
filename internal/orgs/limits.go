package orgs

import (
	"context"
	"fmt"

	"github.com/guilds/guilds/internal/store"
)

// LimitError refuses a request that would take an organisation past one of
// the box's caps; Setting names the variable that sets the cap.
type LimitError struct {
	Code    string // the API error code, e.g. agent_limit_reached
	Setting string // e.g. GUILDS_MAX_AGENTS_PER_ORG
	Limit   int
	What    string // what is counted, e.g. "agents"
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("this organisation already has its %d %s (%s); delete some or ask the operator to raise the limit",
		e.Limit, e.What, e.Setting)
}

// checkAgentRoom refuses a new agent once the organisation has max of them.
// The organisation's row is locked first, so concurrent creations are
// counted one after the other and cannot both take the last place.
func checkAgentRoom(ctx context.Context, db store.DB, orgID string, max int) error {
	if max <= 0 {
		return nil
	}
	var n int
	if _, err := db.Exec(ctx, `SELECT 1 FROM organisations WHERE id = $1 FOR UPDATE`, orgID); err != nil {
		return store.Map(err)
	}
	err := db.QueryRow(ctx, `SELECT count(*) FROM agents a JOIN guilds g ON g.id = a.guild_id
		WHERE g.organisation_id = $1`, orgID).Scan(&n)
	if err != nil {
		return store.Map(err)
	}
	if n >= max {
		return &LimitError{Code: "agent_limit_reached", Setting: "GUILDS_MAX_AGENTS_PER_ORG", Limit: max, What: "agents"}
	}
	return nil
}
