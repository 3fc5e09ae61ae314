package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/usage"
	"github.com/guilds/guilds/internal/workspaces/stopbus"
	"github.com/guilds/guilds/workflows/run"
)

func (s *Server) runRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/agents/:id/runs", Tag: "runs", Summary: "Start a run of an agent",
			Body: runInput{}, Reply: runs.Run{}, Status: 201, Handle: s.startRun},
		{Method: "GET", Path: "/api/agents/:id/runs", Tag: "runs", Summary: "List an agent's runs, newest first" + runListQuery,
			Reply: []runListItem{}, Handle: listRuns},
		{Method: "GET", Path: "/api/guilds/:id/runs", Tag: "runs", Summary: "List a guild's runs, newest first" + runListQuery,
			Reply: []runListItem{}, Handle: listGuildRuns},
		{Method: "GET", Path: "/api/orgs/:id/runs", Tag: "runs", Summary: "List an organisation's runs, newest first" + runListQuery,
			Reply: []runListItem{}, Handle: listOrgRuns},
		{Method: "GET", Path: "/api/runs/:id", Tag: "runs", Summary: "Get a run with its transcript",
			Reply: runView{}, Handle: getRun},
		{Method: "GET", Path: "/api/runs/:id/activity", Tag: "runs",
			Summary: "What a live run's workflow is trying now: each pending step with its attempt, last failure (redacted), next try and progress",
			Reply:   runSteps{}, Handle: s.runActivity, NoTx: true},
		{Method: "GET", Path: "/api/runs/:id/events", Tag: "runs",
			Summary: "Stream a run's messages and status, and its secret and approval requests as they open and are answered, as server-sent events until it ends", Raw: s.runEvents},
		{Method: "POST", Path: "/api/runs/:id/cancel", Tag: "runs", Summary: "Cancel a run",
			Reply: runs.Run{}, Status: 202, Handle: s.cancelRun, NoTx: true},

		{Method: "GET", Path: "/api/orgs/:id/model-keys", Tag: "models", Summary: "List which providers the organisation holds its own key for",
			Reply: []modelKey{}, Handle: listModelKeys},
		{Method: "PUT", Path: "/api/orgs/:id/model-keys/:provider", Tag: "models", Summary: "Set the organisation's key for a model provider",
			Body: modelKeyInput{}, Status: 204, Handle: s.putModelKey},
		{Method: "DELETE", Path: "/api/orgs/:id/model-keys/:provider", Tag: "models", Summary: "Remove the organisation's key for a model provider",
			Status: 204, Handle: deleteModelKey},
		{Method: "GET", Path: "/api/orgs/:id/model-providers", Tag: "models", Summary: "List model providers and whether the organisation or the box holds a key",
			Reply: []models.ProviderStatus{}, Handle: s.listModelProviders},

		{Method: "GET", Path: "/api/guilds/:id/issues", Tag: "issues", Summary: "List the tooling issues agents filed on a guild (?status=open|resolved)",
			Reply: []issues.Issue{}, Handle: listIssues},
		{Method: "POST", Path: "/api/issues/:id/resolve", Tag: "issues", Summary: "Resolve one tooling issue",
			Reply: issues.Issue{}, Handle: resolveIssue},
		{Method: "POST", Path: "/api/guilds/:id/issues/resolve-all", Tag: "issues", Summary: "Resolve every open tooling issue of a guild",
			Reply: resolvedCount{}, Handle: resolveAllIssues},
	}
}

type runInput struct {
	Message string `json:"message"`
	Trigger string `json:"trigger,omitempty"` // direct (default), group or schedule
	Budget  int    `json:"budget,omitempty"`  // tool-call budget (default 50, at most 500)
}

// models returns the resolver, falling back to box keys only.
func (s *Server) models() *models.Resolver {
	if s.Models != nil {
		return s.Models
	}
	return &models.Resolver{Integrations: s.Integrations}
}

func errNoTemporal() *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "runs need Temporal, which this server is not connected to"}
}

func (s *Server) startRun(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in runInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	agent, err := orgs.GetAgent(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	if _, err := s.models().Resolve(ctx, db, agent.OrganisationID, agent.Model); err != nil {
		return 0, nil, err
	}
	if s.Temporal == nil {
		return 0, nil, errNoTemporal()
	}
	id, err := run.Start(ctx, s.Temporal, db, run.Input{AgentID: c.Param("id"), Message: in.Message, Trigger: in.Trigger,
		Budget: in.Budget, Models: s.models(), TaskQueue: s.RunTaskQueue, StartedBy: p.UserID})
	if err != nil {
		return 0, nil, err
	}
	r, err := runs.Load(ctx, db, id)
	return http.StatusCreated, r, err
}

// runView is a run's transcript with what its model turns consumed and the
// login each call used (by call seq, from the audit trail).
type runView struct {
	runs.Transcript
	Usage  usage.RunUsage          `json:"usage"`
	Logins map[int]audit.CallLogin `json:"logins"`
	// Tasks are the calls whose server runs them as a task, still followed:
	// what a waiting run waits for besides its approvals and inputs.
	Tasks []runs.FollowedTask `json:"tasks,omitempty"`
}

func getRun(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	t, err := runs.GetTranscript(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	u, err := usage.OfRun(ctx, db, t.Run.ID)
	if err != nil {
		return 0, nil, err
	}
	logins, err := audit.LoginsOfRun(ctx, db, t.Run.ID)
	if err != nil {
		return 0, nil, err
	}
	view := runView{Transcript: t, Usage: u, Logins: logins}
	if t.Run.Status == runs.StatusWaiting {
		if view.Tasks, err = runs.FollowedTasks(ctx, db, t.Run.ID); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusOK, view, nil
}

func (s *Server) cancelRun(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	r, err := runs.Get(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	if runs.Final(r.Status) {
		return 0, nil, &Error{Status: http.StatusConflict, Code: "run_ended", Message: "the run already ended (" + r.Status + ")"}
	}
	if s.Temporal == nil {
		return 0, nil, errNoTemporal()
	}
	err = run.Cancel(ctx, s.Temporal, r.ID)
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		// No workflow behind the row (it never started, or history was
		// purged): end the row here.
		if err := runs.Finish(ctx, db, r.ID, runs.StatusCancelled, "cancelled by an operator"); err != nil {
			return 0, nil, err
		}
	case err != nil:
		return 0, nil, err
	}
	// The sandbox is the agent's, so this ends the background commands of
	// the agent's other runs too: a cancel is the operator's stop.
	s.sendStop(ctx, stopbus.Order{Agents: []string{r.AgentID}, Why: "run cancelled"})
	r, err = runs.Load(ctx, db, r.ID)
	return http.StatusAccepted, r, err
}

// runEvents streams a run as server-sent events: "message" for each message
// (in seq order per turn), "status" when the run's status changes,
// "secret_request" and "approval" when a request of the run opens or is
// answered. The stream ends after the run's final status. ?after=N skips messages up to seq N.
func (s *Server) runEvents(c *gin.Context) {
	p := c.MustGet(principalKey).(access.Principal)
	ctx := c.Request.Context()
	r, err := runs.Get(ctx, s.db(), p, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	// A reconnecting EventSource names the last message it got in
	// Last-Event-ID; an explicit ?after= wins.
	after := 0
	v, field := c.Query("after"), "after"
	if v == "" {
		v, field = c.GetHeader("Last-Event-ID"), "Last-Event-ID"
	}
	if v != "" {
		if _, err := fmt.Sscan(v, &after); err != nil || after < 0 {
			s.fail(c, badRequest(field+" must be a message seq"))
			return
		}
	}
	// The stream lives as long as the run: it is exempt from the server's
	// write timeout (the read deadline went with the request's body).
	_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Time{})
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	err = runs.Follow(ctx, s.DB, r.ID, after, s.RunEvents, func(ev runs.Event) error {
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		id := ""
		if ev.Message != nil {
			id = fmt.Sprintf("id: %d\n", ev.Message.Seq)
		}
		if _, err := fmt.Fprintf(w, "%sevent: %s\ndata: %s\n\n", id, ev.Type, data); err != nil {
			return err
		}
		w.Flush()
		return nil
	}, secretRequestEvents(s.DB, r.ID), approvalEvents(s.DB, r.ID))
	if err != nil && ctx.Err() == nil {
		s.Log.Warn("run event stream ended", "run_id", r.ID, "err", err)
	}
}

// secretRequestEvents reports each of the run's secret requests as a
// "secret_request" event when it opens and again when it is answered, so an
// operator following the run sees the question while the call waits. A
// request never holds the value.
func secretRequestEvents(db store.DB, runID string) runs.Side {
	seen := map[string]string{}
	return func(ctx context.Context) ([]runs.Event, error) {
		reqs, err := agentsecrets.RunRequests(ctx, db, runID)
		if err != nil {
			return nil, err
		}
		var out []runs.Event
		for i := range reqs {
			if seen[reqs[i].ID] == reqs[i].Status {
				continue
			}
			seen[reqs[i].ID] = reqs[i].Status
			out = append(out, runs.Event{Type: "secret_request", Data: reqs[i]})
		}
		return out, nil
	}
}

type modelKey struct {
	Provider string `json:"provider"`
	Set      bool   `json:"set"`
}

type modelKeyInput struct {
	Key string `json:"key"`
}

func listModelKeys(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	held, err := models.OrgKeyProviders(ctx, db, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out := []modelKey{}
	for _, name := range models.Names() {
		out = append(out, modelKey{Provider: name, Set: held[name]})
	}
	return http.StatusOK, out, nil
}

func (s *Server) putModelKey(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in modelKeyInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	err := models.SetOrgKey(ctx, db, s.models().Keyring, c.Param("id"), c.Param("provider"), in.Key)
	return http.StatusNoContent, nil, err
}

func deleteModelKey(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	if !models.Known(c.Param("provider")) {
		return 0, nil, store.ErrNotFound
	}
	return http.StatusNoContent, nil, models.DeleteOrgKey(ctx, db, c.Param("id"), c.Param("provider"))
}

func (s *Server) listModelProviders(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	out, err := s.models().Providers(ctx, db, c.Param("id"))
	return http.StatusOK, out, err
}

type resolvedCount struct {
	Resolved int `json:"resolved"`
}

func listIssues(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := issues.List(ctx, db, p, c.Param("id"), c.Query("status"))
	return http.StatusOK, out, err
}

func resolveIssue(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := issues.Resolve(ctx, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func resolveAllIssues(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	n, err := issues.ResolveAll(ctx, db, p, c.Param("id"))
	return http.StatusOK, resolvedCount{Resolved: n}, err
}
