package connections_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/validation"
)

// pairAdapter accepts the login whose "left" field is left-good-0123 and
// whose "right" field is right-good-0123, and names the field it refuses.
type pairAdapter struct{}

func (pairAdapter) Name() string { return "pair-test" }

type refusedField string

func (f refusedField) Error() string         { return "refused " + string(f) }
func (f refusedField) Unwrap() error         { return adapters.ErrRejected }
func (f refusedField) RejectedField() string { return string(f) }

func (pairAdapter) Check(_ context.Context, c adapters.Conn) (string, error) {
	for _, f := range []string{"left", "right"} {
		if c.Cred.Extra[f] != f+"-good-0123" {
			return "", refusedField(f)
		}
	}
	return "a pair", nil
}

func (pairAdapter) Call(context.Context, adapters.Conn, string, json.RawMessage) (string, error) {
	return "", nil
}

func init() { adapters.Register(pairAdapter{}) }

// The multi-field key shape: a token adapter row with key_fields takes its
// keys in values; each missing, unknown or unredactable field is named, a
// single key is refused, a refused key is named by the service's check, and
// the good pair is stored as two values with nothing left behind before.
func TestServiceConnectKeyFields(t *testing.T) {
	ctx := context.Background()
	svc, db, orgID := newService(t)
	if _, err := db.Exec(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ('pair', 'pair', 'adapter', 'http', 'http://127.0.0.1:9', 'token',
		'{"adapter":"pair-test","key_fields":[{"name":"left","label":"Left key"},{"name":"right"},{"name":"extra","optional":true}]}')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
		SELECT id, 'look', 'Look', '{"type":"object"}', 0 FROM mcp_servers WHERE slug = 'pair'`); err != nil {
		t.Fatal(err)
	}
	admin := access.Principal{UserID: "u", Admin: true}
	connect := func(key string, values map[string]string) (connections.Outcome, error) {
		return svc.Connect(ctx, admin, connections.Request{Key: key, Values: values,
			Login: connections.ConnectInput{Slug: "pair", OwnerScope: grants.ScopeOrganisation, OwnerID: orgID}})
	}
	field := func(err error) string {
		var v *validation.Error
		if !errors.As(err, &v) {
			return "not a validation error: " + err.Error()
		}
		return v.Problems[0].Field
	}
	for want, values := range map[string]map[string]string{
		"values.right":   {"left": "left-good-0123"},
		"values.left":    {"left": "short", "right": "right-good-0123"},
		"values.unknown": {"left": "left-good-0123", "right": "right-good-0123", "unknown": "whatever-0123"},
	} {
		_, err := connect("", values)
		if got := field(err); got != want {
			t.Errorf("%v: %s, want %s (%v)", values, got, want, err)
		}
		if strings.Contains(err.Error(), "good-0123") || strings.Contains(err.Error(), "whatever") {
			t.Errorf("an error repeats a value: %v", err)
		}
	}
	if _, err := connect("left-good-0123", nil); field(err) != "key" {
		t.Errorf("a single key: %v", err)
	}
	_, err := connect("", map[string]string{"left": "left-good-0123", "right": "right-bad-01234"})
	var named *connections.KeyRejectedError
	if !errors.As(err, &named) || named.Field != "right" || !errors.Is(err, connections.ErrKeyRejected) {
		t.Fatalf("a refused key: %v", err)
	}
	if left, _ := connstore.List(ctx, db, "", ""); len(left) != 0 {
		t.Fatalf("refused connects left %d logins", len(left))
	}

	out, err := connect("", map[string]string{"left": " left-good-0123 ", "right": "right-good-0123", "extra": " "})
	if err != nil || out.Tools != 1 || out.Connection.AccountHint != "a pair" {
		t.Fatalf("good pair: %+v %v", out, err)
	}
	cred, err := svc.Engine.Resolver().Token(ctx, uuid.MustParse(out.Connection.ID))
	if err != nil || cred.AccessToken != "" || len(cred.Extra) != 2 || cred.Extra["left"] != "left-good-0123" || cred.Extra["right"] != "right-good-0123" {
		t.Fatalf("stored %d values, %v", len(cred.Extra), err)
	}
}
