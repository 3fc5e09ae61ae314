package api

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/workflows/connect"
)

// A callback is repeated when its first answer never reached the browser (the
// replica died mid-request, the connection was cut) or the page is reloaded.
// By then the state is spent: the code exchange consumed the pending login.
// The login's workflow still knows the digest of the state it took, so a
// repeat is answered with that login's outcome, without handing the code over
// again. The state alone names no login once its pending row is gone: the
// candidates are the logins whose cookie the request carries, each checked as
// the first callback was (starting browser, or starting user) before its
// workflow is asked.

// maxRepeatCandidates bounds the login cookies one repeated callback looks
// at, whatever a client sends.
const maxRepeatCandidates = 8

// repeatedCallback answers a callback whose state no pending login holds:
// the outcome of the login that took it, or invalid_state.
func (s *Server) repeatedCallback(ctx context.Context, c *gin.Context, db store.DB, state string, starter func(pendingLogin) error) (int, any, error) {
	digest := stateDigest(state)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, connID := range loginCookies(c.Request) {
		hash, user, err := githubapp.Starter(ctx, db, connID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		if starter(pendingLogin{connectors.PendingOAuth{ConnectionID: connID, BrowserHash: hash, StartedBy: user}}) != nil {
			continue
		}
		runID, took, err := connect.Took(ctx, s.Temporal, connID, digest)
		if err != nil {
			return 0, nil, err
		}
		if !took {
			continue
		}
		res, err := connect.WaitRun(ctx, s.Temporal, connID, runID)
		if err != nil {
			return 0, nil, err
		}
		return s.callbackOutcome(ctx, db, connID, res)
	}
	return 0, nil, errUnknownState
}

// loginCookies are the connection ids the request's OAuth login cookies
// name, each once, at most maxRepeatCandidates.
func loginCookies(r *http.Request) []string {
	prefix := oauthCookieName("")
	var ids []string
	for _, ck := range r.Cookies() {
		raw, ok := strings.CutPrefix(ck.Name, prefix)
		if !ok {
			continue
		}
		id, err := uuid.Parse(raw)
		if err != nil {
			continue
		}
		if s := id.String(); !slices.Contains(ids, s) {
			ids = append(ids, s)
		}
		if len(ids) == maxRepeatCandidates {
			break
		}
	}
	return ids
}

// stateDigest is the SHA-256 of a callback's state, as the login's workflow
// keeps it: the state itself never enters history.
func stateDigest(state string) []byte {
	sum := sha256.Sum256([]byte(state))
	return sum[:]
}
