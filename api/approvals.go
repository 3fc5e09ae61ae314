package api

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/workflows/run"
)

// approvalRoutes are the operator's inbox of calls that wait for a person
// (docs/adr/0514).
func (s *Server) approvalRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/orgs/:id/approvals", Tag: "approvals",
			Summary: "The organisation's approval inbox (?state=pending|approved|denied|expired|used, ?limit=); arguments are shown redacted",
			Reply:   []approvals.Request{}, Handle: approvalInbox},
		{Method: "GET", Path: "/api/runs/:id/approvals", Tag: "approvals", Summary: "The approval requests of a run",
			Reply: []approvals.Request{}, Handle: runApprovals},
		{Method: "POST", Path: "/api/approvals/:id", Tag: "approvals",
			Summary: "Answer an approval request: {\"decision\": \"approve\" | \"deny\", \"reason\", \"stop_asking\"} (stop_asking: approve, and let the tool run unasked for the rest of the run)",
			Body:    approvalAnswer{}, Reply: approvals.Request{}, Handle: s.answerApproval},
	}
}

type approvalAnswer struct {
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	StopAsking bool   `json:"stop_asking"`
}

// approverOrgs are the organisations whose requests p may answer: those it
// is an operator of. Being an instance admin is not enough: an approval is
// an organisation's decision about its own agents.
func approverOrgs(p access.Principal) []string {
	out := make([]string, 0, len(p.Orgs))
	for id := range p.Orgs {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func approvalInbox(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	org := c.Param("id")
	if !p.CanSeeOrg(org) {
		return 0, nil, store.ErrNotFound
	}
	limit, _ := strconv.Atoi(c.Query("limit"))
	state := approvals.State(c.DefaultQuery("state", string(approvals.StatePending)))
	out, err := approvals.List(ctx, db, approvals.Filter{Orgs: []string{org}, State: state, Limit: limit})
	if errors.Is(err, approvals.ErrBadFilter) {
		return 0, nil, badRequest(err.Error())
	}
	return http.StatusOK, out, err
}

func runApprovals(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	r, err := runs.Get(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := approvals.List(ctx, db, approvals.Filter{RunID: r.ID, Limit: 500})
	return http.StatusOK, out, err
}

func (s *Server) answerApproval(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in approvalAnswer
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	d := approvals.Decision{UserID: p.UserID, UserName: s.userName(ctx, db, p), Reason: in.Reason, StopAsking: in.StopAsking}
	switch in.Decision {
	case "approve":
		d.Approve = true
	case "deny":
		if in.StopAsking {
			return 0, nil, badRequest("stop_asking goes with approve only")
		}
	default:
		return 0, nil, badRequest(`decision is "approve" or "deny"`)
	}
	out, err := approvals.Decide(ctx, db, c.Param("id"), approverOrgs(p), d)
	switch {
	case errors.Is(err, approvals.ErrDecided):
		// The answer that came first stands. Tell the run again in case the
		// first signal was lost: it reads the stored answer either way.
		s.signalApproval(c, out)
		return 0, nil, &Error{Status: http.StatusConflict, Code: "already_decided", Message: err.Error()}
	case errors.Is(err, approvals.ErrReasonLong):
		return 0, nil, badRequest(err.Error())
	case err != nil:
		return 0, nil, err
	}
	s.signalApproval(c, out)
	return http.StatusOK, out, nil
}

// signalApproval wakes the waiting run once the answer has committed. A lost
// signal delays the run to the request's expiry, where the stored answer is
// read and honoured.
func (s *Server) signalApproval(c *gin.Context, r approvals.Request) {
	if s.Temporal == nil || r.ID == "" {
		return
	}
	ctx := context.WithoutCancel(c.Request.Context())
	afterCommit(c, func() {
		if err := s.Temporal.SignalWorkflow(ctx, run.WorkflowID(r.RunID), "", run.ApprovalSignal,
			run.ApprovalSignalPayload{RequestID: r.ID}); err != nil {
			s.Log.WarnContext(ctx, "could not tell a run of its approval", "run_id", r.RunID, "request_id", r.ID, "err", err)
		}
	})
}

func (s *Server) userName(ctx context.Context, db store.DB, p access.Principal) string {
	if p.UserID == "" {
		return "an operator"
	}
	name, err := access.UserName(ctx, db, p.UserID)
	if err != nil || name == "" {
		return "an operator"
	}
	return name
}
