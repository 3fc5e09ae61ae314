package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
)

// inputRoutes are the operator's inbox of forms MCP servers ask a person to
// fill in the middle of a call (docs/adr/0515).
func (s *Server) inputRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/orgs/:id/inputs", Tag: "approvals",
			Summary: "The organisation's inbox of server forms (?state=pending|accepted|declined|cancelled|expired, ?limit=): each with the server's message and requested schema, or its link",
			Reply:   []inputs.Request{}, Handle: inputInbox},
		{Method: "GET", Path: "/api/runs/:id/inputs", Tag: "approvals", Summary: "The server forms a run asked a person for",
			Reply: []inputs.Request{}, Handle: runInputs},
		{Method: "POST", Path: "/api/inputs/:id", Tag: "approvals",
			Summary: "Answer a server's form: {\"action\": \"accept\" | \"decline\" | \"cancel\", \"content\": {…}} (content with accept only, checked against the form's schema); the waiting call sends it to the server",
			Body:    inputAnswer{}, Reply: inputs.Request{}, Handle: s.answerInput},
	}
}

type inputAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

func inputInbox(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	org := c.Param("id")
	if !p.CanSeeOrg(org) {
		return 0, nil, store.ErrNotFound
	}
	limit, _ := strconv.Atoi(c.Query("limit"))
	state := inputs.State(c.DefaultQuery("state", string(inputs.StatePending)))
	out, err := inputs.List(ctx, db, inputs.Filter{Orgs: []string{org}, State: state, Limit: limit})
	if errors.Is(err, inputs.ErrBadFilter) {
		return 0, nil, badRequest(err.Error())
	}
	return http.StatusOK, out, err
}

func runInputs(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	r, err := runs.Get(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := inputs.List(ctx, db, inputs.Filter{RunID: r.ID, Limit: 500})
	return http.StatusOK, out, err
}

// answerInput records the answer in the request's transaction; its commit
// announces it to the call that waits (NOTIFY), wherever that call runs, and
// signals the run, whose workflow may hold the call instead.
// The content is never logged.
func (s *Server) answerInput(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in inputAnswer
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := inputs.Respond(ctx, db, c.Param("id"), approverOrgs(p), inputs.Reply{
		Answer: inputs.Answer{Action: in.Action, Content: in.Content}, UserID: p.UserID, UserName: s.userName(ctx, db, p)})
	switch {
	case errors.Is(err, inputs.ErrAnswered):
		// Tell the run again in case the first signal was lost: a held call
		// reads the stored answer either way.
		s.wakeRun(c, out.RunID, out.ID)
		return 0, nil, &Error{Status: http.StatusConflict, Code: "already_answered", Message: err.Error()}
	case errors.Is(err, inputs.ErrInvalidAnswer):
		return 0, nil, &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_answer", Message: err.Error()}
	case errors.Is(err, inputs.ErrBadForm):
		return 0, nil, &Error{Status: http.StatusUnprocessableEntity, Code: "bad_form", Message: err.Error()}
	case err != nil:
		return 0, nil, err
	}
	// A call held in the run workflow (a stateless server's input_required)
	// waits for this signal; a call waiting in place hears the NOTIFY.
	s.wakeRun(c, out.RunID, out.ID)
	return http.StatusOK, out, nil
}
