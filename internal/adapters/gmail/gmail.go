// Package gmail is the local adapter for the Gmail API: the login's Google
// access token goes in the Authorization header as a bearer token, and each
// tool answers compact TSV.
package gmail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"

	"github.com/guilds/guilds/internal/adapters"
)

// Name is the catalog's config.adapter for this service.
const Name = "gmail"

func init() { adapters.Register(Adapter{}) }

// Adapter implements adapters.Adapter for the Gmail API.
type Adapter struct{}

func (Adapter) Name() string { return Name }

// Check reads the mailbox profile; its address is the hint. Connect uses
// the OAuth callback instead, so this serves a later test of the login.
func (Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	var p profile
	if err := adapters.Rejection(c.GetJSON(ctx, "/users/me/profile", nil, authHeader(c), &p)); err != nil {
		return "", err
	}
	return p.EmailAddress, nil
}

var tools = adapters.Handlers[args]{
	"search_threads": searchThreads,
	"get_thread":     getThread,
	"get_message":    getMessage,
	"list_labels":    listLabels,
	"list_drafts":    listDrafts,
	"create_draft":   createDraft,
	"send_message":   sendMessage,
}

// args is the union of the tools' arguments (the manifest's schemas).
type args struct {
	Query    string   `json:"query"`
	ID       string   `json:"id"`
	Limit    int      `json:"limit"`
	To       []string `json:"to"`
	Subject  string   `json:"subject"`
	Body     string   `json:"body"`
	ThreadID string   `json:"thread_id"`
}

func (Adapter) Call(ctx context.Context, c adapters.Conn, tool string, raw json.RawMessage) (string, error) {
	return tools.Call(ctx, c, Name, tool, raw)
}

func authHeader(c adapters.Conn) http.Header {
	return http.Header{"Authorization": {"Bearer " + c.Cred.AccessToken}}
}

func get(ctx context.Context, c adapters.Conn, path string, q url.Values, out any) error {
	return c.GetJSON(ctx, path, q, authHeader(c), out)
}

func post(ctx context.Context, c adapters.Conn, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	h := authHeader(c)
	h.Set("Content-Type", "application/json")
	return c.DoJSON(ctx, http.MethodPost, c.BaseURL, path, nil, h, bytes.NewReader(body), out)
}

// The service's ids are URL-safe tokens (hex in practice); anything else
// would change the request path.
var idRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

func checkID(what, id string) error {
	if !idRe.MatchString(id) {
		return fmt.Errorf("%q is not a %s id", id, what)
	}
	return nil
}

// notFound names the missing resource on the service's 404, keeping the
// HTTP error underneath.
func notFound(err error, what, id string) error {
	var he *adapters.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return fmt.Errorf("%s %s was not found: %w", what, id, err)
	}
	return err
}
