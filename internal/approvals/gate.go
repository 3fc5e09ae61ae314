package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Asking is the answer of a policy for one call: nil when the call runs
// unasked.
type Asking struct {
	Version string
	Because string
	Wait    time.Duration
}

// Check resolves the tool's setting at the run's place and evaluates it
// against the call's arguments. A tool approved with "stop asking" in this
// run runs unasked for the rest of it.
func Check(ctx context.Context, db store.DB, at Place, runID, tool string, args json.RawMessage) (*Asking, error) {
	eff, err := Resolve(ctx, db, at, tool)
	if err != nil || !eff.Decided || !eff.Ask {
		return nil, err
	}
	asks, rule := eff.Policy.Asks(args)
	if !asks {
		return nil, nil
	}
	stop, err := StopsAsking(ctx, db, runID, tool)
	if err != nil || stop {
		return nil, err
	}
	return &Asking{Version: eff.Version, Wait: eff.Wait, Because: because(eff, rule)}, nil
}

func because(eff Effective, rule int) string {
	where := "the " + eff.Scope
	if rule == 0 {
		return fmt.Sprintf("%s asks before every call of %s", where, eff.Tool)
	}
	r := eff.Policy.Rules[rule-1]
	what := r.Value
	if len(r.Values) > 0 {
		what = strings.Join(r.Values, ", ")
	}
	return fmt.Sprintf("%s asks when %s %s %s", where, r.Arg, r.Op, what)
}
