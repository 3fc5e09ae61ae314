package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
)

// secretRoutes are the agent secrets (set, list, delete, grants, audit)
// and the operators' answers to secret_request. No route returns a value.
func (s *Server) secretRoutes() []route {
	var out []route
	for _, owner := range []struct{ path, noun string }{{"orgs", "an organisation"}, {"guilds", "a guild"}, {"agents", "an agent"}} {
		base := "/api/" + owner.path + "/:id/secrets"
		out = append(out,
			route{Method: "GET", Path: base, Tag: "secrets", Summary: "List the secrets owned by " + owner.noun + " (metadata and the agents each reaches; never a value)",
				Reply: []agentsecrets.Secret{}, Handle: listSecrets},
			route{Method: "PUT", Path: base + "/:name", Tag: "secrets", Summary: "Set or replace a secret owned by " + owner.noun,
				Body: secretInput{}, Reply: agentsecrets.Secret{}, Handle: s.droppingShellLogs(true, s.putSecret)},
			route{Method: "DELETE", Path: base + "/:name", Tag: "secrets", Summary: "Delete a secret owned by " + owner.noun,
				Status: 204, Handle: s.droppingShellLogs(true, deleteSecret)},
			route{Method: "PUT", Path: base + "/:name/grants", Tag: "secrets",
				Summary: "Grant (enabled true) or revoke (enabled false) a secret for the agents at and below a scope within its owner",
				Body:    secretGrantInput{}, Reply: agentsecrets.Secret{}, Handle: s.droppingShellLogs(false, putSecretGrant)},
			route{Method: "DELETE", Path: base + "/:name/grants", Tag: "secrets",
				Summary: "Remove a secret's grant row at a scope, so that scope inherits again",
				Body:    secretGrantInput{}, Reply: agentsecrets.Secret{}, Handle: s.droppingShellLogs(false, deleteSecretGrant)},
		)
	}
	return append(out,
		route{Method: "GET", Path: "/api/orgs/:id/secret-audit", Tag: "secrets", Summary: "List the organisation's secret changes, newest first (who, what, when; never a value)",
			Reply: []agentsecrets.AuditEntry{}, Handle: listSecretAudit},
		route{Method: "GET", Path: "/api/orgs/:id/secret-requests", Tag: "secrets", Summary: "The organisation's inbox of secret requests (?status=pending|provided|declined)",
			Reply: []agentsecrets.Request{}, Handle: secretInbox},
		route{Method: "GET", Path: "/api/runs/:id/secret-requests", Tag: "secrets", Summary: "List the secret requests of a run",
			Reply: []agentsecrets.Request{}, Handle: runSecretRequests},
		route{Method: "POST", Path: "/api/secret-requests/:id", Tag: "secrets",
			Summary: "Answer a secret request with {\"value\"} (stored sealed as the agent's secret) or {\"decline\": true}",
			Body:    agentsecrets.Answer{}, Reply: agentsecrets.Request{}, Handle: s.answerSecretRequest},
	)
}

type secretInput struct {
	Value *string `json:"value"`
}

type secretGrantInput struct {
	Scope   string `json:"scope"`    // organisation, guild or agent
	ScopeID string `json:"scope_id"` // its id
	Enabled *bool  `json:"enabled"`  // PUT only
}

// actor names the caller in the audit rows.
func actor(p access.Principal) string { return audit.Actor(p) }

// secretOwner is the owner place the route's path names.
func secretOwner(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (agentsecrets.Place, error) {
	seg := c.FullPath()[len("/api/"):]
	for i := range seg {
		if seg[i] == '/' {
			seg = seg[:i]
			break
		}
	}
	scope, _ := agentsecrets.ParseScope(seg)
	return agentsecrets.VisiblePlace(ctx, db, p, scope, c.Param("id"))
}

func listSecrets(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	owner, err := secretOwner(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	out, err := agentsecrets.List(ctx, db, owner)
	return http.StatusOK, out, err
}

func (s *Server) putSecret(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in secretInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	owner, err := secretOwner(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	value := ""
	if in.Value != nil {
		value = *in.Value
	}
	out, created, err := agentsecrets.Set(ctx, db, s.models().Keyring, owner, c.Param("name"), value, actor(p))
	if err != nil {
		return 0, nil, secretError(err)
	}
	if created {
		return http.StatusCreated, out, nil
	}
	return http.StatusOK, out, nil
}

func deleteSecret(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	owner, err := secretOwner(ctx, c, db, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, agentsecrets.Delete(ctx, db, owner, c.Param("name"), actor(p))
}

// grantTarget reads the scope a grant body names, within what the caller can see.
func grantTarget(ctx context.Context, c *gin.Context, db store.DB, p access.Principal, put bool) (agentsecrets.Place, agentsecrets.Place, bool, error) {
	var in secretGrantInput
	if err := bindJSON(c, &in); err != nil {
		return agentsecrets.Place{}, agentsecrets.Place{}, false, err
	}
	scope, ok := agentsecrets.ParseScope(in.Scope)
	switch {
	case !ok:
		return agentsecrets.Place{}, agentsecrets.Place{}, false, invalidField("scope", "must be organisation, guild or agent")
	case in.ScopeID == "":
		return agentsecrets.Place{}, agentsecrets.Place{}, false, invalidField("scope_id", "is required")
	case put && in.Enabled == nil:
		return agentsecrets.Place{}, agentsecrets.Place{}, false, invalidField("enabled", "is required (true grants, false revokes)")
	case !put && in.Enabled != nil:
		return agentsecrets.Place{}, agentsecrets.Place{}, false, invalidField("enabled", "is not taken by DELETE: it removes the row")
	}
	owner, err := secretOwner(ctx, c, db, p)
	if err != nil {
		return owner, agentsecrets.Place{}, false, err
	}
	target, err := agentsecrets.VisiblePlace(ctx, db, p, scope, in.ScopeID)
	if errors.Is(err, store.ErrNotFound) {
		return owner, target, false, invalidField("scope_id", "names no "+string(scope)+" visible to you")
	}
	return owner, target, in.Enabled != nil && *in.Enabled, err
}

func putSecretGrant(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	owner, target, enabled, err := grantTarget(ctx, c, db, p, true)
	if err != nil {
		return 0, nil, err
	}
	out, err := agentsecrets.SetGrant(ctx, db, owner, c.Param("name"), target, enabled, actor(p))
	if err != nil {
		return 0, nil, err
	}
	to := "granted"
	if !enabled {
		to = "revoked"
	}
	return http.StatusOK, out, auditSecretGrant(ctx, db, p, target, c.Param("name"), to)
}

// auditSecretGrant records a secret's grant written at target in the audit
// trail (the secret's own history is agent_secret_audit).
func auditSecretGrant(ctx context.Context, db store.DB, p access.Principal, target agentsecrets.Place, name, to string) error {
	return recordChange(ctx, db, p, grants.Place{OrgID: target.OrgID, GuildID: target.GuildID, AgentID: target.AgentID},
		audit.Event{Action: audit.ActionSecretGrant, Tool: name, Kind: "secret", Outcome: to})
}

func deleteSecretGrant(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	owner, target, _, err := grantTarget(ctx, c, db, p, false)
	if err != nil {
		return 0, nil, err
	}
	out, err := agentsecrets.RemoveGrant(ctx, db, owner, c.Param("name"), target, actor(p))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, auditSecretGrant(ctx, db, p, target, c.Param("name"), "inherit")
}

func listSecretAudit(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	org, err := agentsecrets.VisiblePlace(ctx, db, p, agentsecrets.ScopeOrganisation, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := agentsecrets.Audit(ctx, db, org.OrgID, 200)
	return http.StatusOK, out, err
}

func secretInbox(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	org, err := agentsecrets.VisiblePlace(ctx, db, p, agentsecrets.ScopeOrganisation, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := agentsecrets.Inbox(ctx, db, org.OrgID, c.Query("status"))
	return http.StatusOK, out, err
}

func runSecretRequests(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	r, err := runs.Get(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := agentsecrets.RunRequests(ctx, db, r.ID)
	return http.StatusOK, out, err
}

func (s *Server) answerSecretRequest(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in agentsecrets.Answer
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := agentsecrets.AnswerRequest(ctx, db, s.models().Keyring, p, c.Param("id"), in, actor(p))
	if err != nil {
		return 0, nil, secretError(err)
	}
	s.wakeRun(c, out.RunID, out.ID) // the run waits for this answer, suspended
	return http.StatusOK, out, nil
}

// secretError names what the shared error table does not know.
func secretError(err error) error {
	switch {
	case errors.Is(err, agentsecrets.ErrAnswered):
		return &Error{Status: http.StatusConflict, Code: "already_answered", Message: err.Error()}
	case errors.Is(err, agentsecrets.ErrNotAsked):
		return &Error{Status: http.StatusForbidden, Code: "not_asked", Message: err.Error()}
	case errors.Is(err, agentsecrets.ErrOperatorSecret):
		return &Error{Status: http.StatusConflict, Code: "secret_set_by_operator", Message: err.Error()}
	case errors.Is(err, agentsecrets.ErrNoKeyring):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "no_encryption_key", Message: err.Error()}
	}
	return err
}
