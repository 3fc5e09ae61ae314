package run

import (
	"context"

	"github.com/guilds/guilds/internal/runs"
)

// overRate takes the call from the rate of the run's organisation; when none
// is left, why is the result the model reads, with when to retry. A rate that
// cannot be read or checked lets the call go (and is logged): it is about
// fairness between organisations, not about secrets.
func (a *Activities) overRate(ctx context.Context, r runs.Run) (why string) {
	if a.d.CallRate == nil {
		return ""
	}
	n, err := a.d.CallRate.Rate(ctx, a.d.DB, r.OrganisationID)
	if err != nil {
		a.d.Log.WarnContext(ctx, "the organisation's call rate could not be read; the call goes", "organisation_id", r.OrganisationID, "err", err)
		return ""
	}
	d, err := a.d.CallRate.Take(ctx, r.OrganisationID, n)
	if err != nil {
		a.d.Log.WarnContext(ctx, "call rate", "organisation_id", r.OrganisationID, "err", err)
	}
	if d.Allowed {
		return ""
	}
	a.d.Log.InfoContext(ctx, "call refused: the organisation's call rate is used up", "run_id", r.ID,
		"organisation_id", r.OrganisationID, "per_minute", d.PerMinute, "retry_after", d.RetryAfter)
	return d.Refusal()
}
