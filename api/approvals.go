package api

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/grants"
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
		{Method: "GET", Path: "/api/approval-policies", Tag: "approvals",
			Summary: "The approval settings written at one scope (scope, scope_id), and with ?tool= the one that decides for that tool there",
			Reply:   []approvals.Setting{}, Handle: listApprovalPolicies},
		{Method: "PUT", Path: "/api/approval-policies", Tag: "approvals",
			Summary: "Make a tool ask first at a scope (ask true, optional typed rules over its arguments, wait such as \"24h\"), or not ask there (ask false)",
			Body:    policyInput{}, Reply: approvals.Setting{}, Handle: s.putApprovalPolicy},
		{Method: "DELETE", Path: "/api/approval-policies", Tag: "approvals",
			Summary: "Remove a scope's approval setting for a tool, so the scope inherits again", Status: 204,
			Body: policyInput{}, Handle: deleteApprovalPolicy},
	}
}

type policyInput struct {
	Scope   string           `json:"scope"`
	ScopeID string           `json:"scope_id"`
	Tool    string           `json:"tool"`
	Ask     *bool            `json:"ask"`
	Rules   []approvals.Rule `json:"rules"`
	Wait    string           `json:"wait"` // a Go duration; "" is 24h
}

// policyPlace checks the principal may see (read) or change (write) the
// scope: the platform scope is the instance admin's.
func policyPlace(ctx context.Context, db store.DB, p access.Principal, scope, id string, write bool) (grants.Place, error) {
	if scope == approvals.ScopePlatform {
		if write && !p.Admin {
			return grants.Place{}, access.ErrForbidden
		}
		return grants.Place{Scope: grants.ScopePlatform}, nil
	}
	return grants.LoadPlaceVisible(ctx, db, p, grants.Scope(scope), id)
}

func listApprovalPolicies(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	scope, id := c.Query("scope"), c.Query("scope_id")
	pl, err := policyPlace(ctx, db, p, scope, id, false)
	if err != nil {
		return 0, nil, err
	}
	if tool := c.Query("tool"); tool != "" {
		eff, err := approvals.Resolve(ctx, db, approvals.Place{OrganisationID: pl.OrgID, GuildID: pl.GuildID, AgentID: pl.AgentID}, tool)
		return http.StatusOK, eff, err
	}
	out, err := approvals.At(ctx, db, scope, id)
	return http.StatusOK, out, policyError(err)
}

func (s *Server) putApprovalPolicy(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in policyInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if in.Ask == nil {
		return 0, nil, badRequest("ask is required: true to ask before the tool runs, false not to ask at this scope")
	}
	var wait time.Duration
	if in.Wait != "" {
		d, err := time.ParseDuration(in.Wait)
		if err != nil {
			return 0, nil, badRequest(`wait is a duration such as "30m", "24h" or "720h"`)
		}
		wait = d
	}
	if _, err := policyPlace(ctx, db, p, in.Scope, in.ScopeID, true); err != nil {
		return 0, nil, err
	}
	types, err := s.argTypes(ctx, db, in.Tool)
	if err != nil {
		return 0, nil, err
	}
	out, err := approvals.Save(ctx, db, approvals.Setting{Scope: in.Scope, ScopeID: in.ScopeID, Tool: in.Tool, Ask: *in.Ask,
		Policy: approvals.Policy{Rules: in.Rules}, Wait: wait, UpdatedBy: actor(p)}, types)
	return http.StatusOK, out, policyError(err)
}

func deleteApprovalPolicy(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in policyInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if _, err := policyPlace(ctx, db, p, in.Scope, in.ScopeID, true); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, policyError(approvals.Delete(ctx, db, in.Scope, in.ScopeID, in.Tool))
}

// argTypes are the argument types of the tool a policy names: a native
// tool's from the registry, an MCP tool's from its listing.
func (s *Server) argTypes(ctx context.Context, db store.DB, tool string) (map[string]approvals.ArgType, error) {
	if s.Tools != nil {
		if t, ok := s.Tools.Lookup(tool); ok {
			return approvals.ArgTypes(t.Schema), nil
		}
	}
	schema, err := grants.ListedSchema(ctx, db, tool)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &Error{Status: http.StatusUnprocessableEntity, Code: "unknown_tool",
			Message: "no native tool and no listed MCP tool is named " + strconv.Quote(tool) + " (use the name the Tools view shows)"}
	}
	return approvals.ArgTypes(schema), err
}

func policyError(err error) error {
	if errors.Is(err, approvals.ErrBadSetting) {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_policy", Message: err.Error()}
	}
	return err
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

// signalApproval wakes the waiting run once the answer has committed.
func (s *Server) signalApproval(c *gin.Context, r approvals.Request) {
	if r.ID != "" {
		s.wakeRun(c, r.RunID, r.ID)
	}
}

// wakeRun tells a run, once the request's work has committed, that an
// inbox request it waits for was answered. A lost signal delays the run to
// the request's deadline, where the stored answer is read and honoured.
func (s *Server) wakeRun(c *gin.Context, runID, requestID string) {
	if s.Temporal == nil {
		return
	}
	ctx := context.WithoutCancel(c.Request.Context())
	afterCommit(c, func() {
		if err := s.Temporal.SignalWorkflow(ctx, run.WorkflowID(runID), "", run.ApprovalSignal,
			run.ApprovalSignalPayload{RequestID: requestID}); err != nil {
			s.Log.WarnContext(ctx, "could not tell a run of an answer", "run_id", runID, "request_id", requestID, "err", err)
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

// approvalEvents reports each of the run's approval requests as an
// "approval" event when it opens and again at each answer (approved, used,
// denied, expired), so an operator following the run sees what the call
// waits for and how the wait ended. The arguments are the redacted ones the
// inbox shows.
func approvalEvents(db store.DB, runID string) runs.Side {
	seen := map[string]approvals.State{}
	return func(ctx context.Context) ([]runs.Event, error) {
		reqs, err := approvals.List(ctx, db, approvals.Filter{RunID: runID, Limit: 500})
		if err != nil {
			return nil, err
		}
		var out []runs.Event
		for i := len(reqs) - 1; i >= 0; i-- { // oldest first
			if seen[reqs[i].ID] == reqs[i].State {
				continue
			}
			seen[reqs[i].ID] = reqs[i].State
			out = append(out, runs.Event{Type: "approval", Data: reqs[i]})
		}
		return out, nil
	}
}
