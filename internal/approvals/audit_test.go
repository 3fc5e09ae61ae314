package approvals_test

import (
	"context"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/audit"
)

// steps is a request's life as the audit trail tells it, oldest first: each
// step with who took it.
func steps(t *testing.T, w world, id string) []string {
	t.Helper()
	evs, err := audit.List(context.Background(), w.db, audit.Filter{RunID: w.run, Action: audit.ActionApproval})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(evs) - 1; i >= 0; i-- {
		if e := evs[i]; e.ApprovalID == id {
			if e.OrganisationID != w.org || e.AgentID != w.agent || e.Tool != "wallet_send" || e.ArgsDigest == "" || e.At.IsZero() {
				t.Errorf("event %+v", e)
			}
			out = append(out, e.Outcome+" by "+e.Actor)
		}
	}
	return out
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Each step of a request is one event of the audit trail, with who took it
// and when: proposed by the agent, then approved or denied by the operator
// or expired by the platform, then executed by the agent. A retried ask, a
// refused second answer and an expiry that came too late add nothing.
func TestEachStepOfARequestIsOneAuditEvent(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	agent, ann := "agent:"+w.agent, "user:"+w.user

	approved := w.request(3, "sha256:01", time.Now().Add(time.Hour))
	r, err := approvals.Ask(ctx, w.db, approved)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := approvals.Ask(ctx, w.db, approved); err != nil { // a retried activity
		t.Fatal(err)
	}
	if _, err := approvals.Decide(ctx, w.db, r.ID, []string{w.org}, approvals.Decision{Approve: true, UserID: w.user, UserName: "Ann"}); err != nil {
		t.Fatal(err)
	}
	if _, err := approvals.Decide(ctx, w.db, r.ID, []string{w.org}, approvals.Decision{UserID: w.user}); err == nil {
		t.Fatal("a second answer was taken")
	}
	if _, err := approvals.Expire(ctx, w.db, r.ID); err != nil { // the timer, after the answer
		t.Fatal(err)
	}
	if _, err := useIn(w.db, r.ID, r.Binding); err != nil {
		t.Fatal(err)
	}
	if got, want := steps(t, w, r.ID), []string{"proposed by " + agent, "approved by " + ann, "executed by " + agent}; !same(got, want) {
		t.Errorf("approved request: %v, want %v", got, want)
	}

	denied, _ := approvals.Ask(ctx, w.db, w.request(4, "sha256:02", time.Now().Add(time.Hour)))
	if _, err := approvals.Decide(ctx, w.db, denied.ID, []string{w.org}, approvals.Decision{UserID: w.user, Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	if got, want := steps(t, w, denied.ID), []string{"proposed by " + agent, "denied by " + ann}; !same(got, want) {
		t.Errorf("denied request: %v, want %v", got, want)
	}

	expired, _ := approvals.Ask(ctx, w.db, w.request(5, "sha256:03", time.Now().Add(time.Hour)))
	if _, err := approvals.Expire(ctx, w.db, expired.ID); err != nil {
		t.Fatal(err)
	}
	closed, _ := approvals.Ask(ctx, w.db, w.request(6, "sha256:04", time.Now().Add(time.Hour)))
	if err := approvals.CloseRun(ctx, w.db, w.run); err != nil { // the run was cancelled
		t.Fatal(err)
	}
	for _, id := range []string{expired.ID, closed.ID} {
		if got, want := steps(t, w, id), []string{"proposed by " + agent, "expired by platform"}; !same(got, want) {
			t.Errorf("expired request: %v, want %v", got, want)
		}
	}
}
