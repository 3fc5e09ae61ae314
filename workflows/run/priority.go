package run

import (
	"go.temporal.io/sdk/temporal"

	"github.com/guilds/guilds/internal/runs"
)

// fairness is off only in the load harness's comparison (fairness_load_test.go).
var fairness = true

// Trigger priorities: a person waiting in a direct chat goes before a group
// chat's reply, which goes before a schedule. Temporal's default range is
// 1 (first) to 5; an unset key means 3.
var triggerPriority = map[string]int{
	runs.TriggerDirect:   1,
	runs.TriggerGroup:    3,
	runs.TriggerSchedule: 5,
}

// Priority is the Temporal priority a run's workflow is started with: its
// organisation is the fairness key, so one organisation's backlog cannot
// starve another's, and its trigger sets the order within a queue. The
// run's activities inherit it. A server without fairness or priority
// enabled ignores both (docs/adr/0519-fairness-between-organisations.md).
func Priority(organisationID, trigger string) temporal.Priority {
	if !fairness {
		return temporal.Priority{}
	}
	return temporal.Priority{PriorityKey: triggerPriority[trigger], FairnessKey: organisationID}
}
