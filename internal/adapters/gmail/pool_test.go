package gmail_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
)

// The adapter behind the session pool on a real Postgres: the manifest's
// row and tools, the profile check with a refused then a good token, calls.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	svc := newService(t)
	adapterstest.Run(t, adapterstest.Spec{
		Slug: "gmail", URL: svc.api(),
		BadKeys: []string{"ya29.revoked"}, GoodKey: goodToken,
		Tools: 7, Listed: []string{"gmail_search_threads"}, Hint: "ada@example.com",
		Calls: []adapterstest.Call{
			{Tool: "search_threads", Args: `{"query":"label:inbox","limit":2}`, Prefix: "thread\t",
				Check: func(t *testing.T, out string, _ error) {
					if strings.Count(out, "\n") != 3 {
						t.Fatalf("search_threads: %q", out)
					}
				}},
			{Tool: "get_message", Args: `{"id":"` + messageID(4, 0) + `"}`, Want: []string{"\tHello Ada, the figures for 4 are in.\n"}},
			{Tool: "search_threads", Args: `{"query":"ratelimited"}`, WantErr: true, Want: []string{"429"}},
		},
	})
}

// fixedToken stands for the OAuth resolver: the access token a Google
// callback stored.
type fixedToken string

func (f fixedToken) Token(context.Context, uuid.UUID) (connectors.Credential, error) {
	return connectors.Credential{AccessToken: string(f), TokenType: "Bearer"}, nil
}

func (f fixedToken) Refresh(ctx context.Context, id uuid.UUID) (connectors.Credential, error) {
	return f.Token(ctx, id)
}

func (f fixedToken) MarkRejected(context.Context, uuid.UUID, string) error { return nil }

// The row as the catalog really has it: OAuth, Google provider, connected by
// the callback; calls get the access token from the credentials source.
func TestThroughPoolOAuthRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t)
	e := adapterstest.New(t, "gmail", svc.api())
	if _, err := e.DB.Exec(ctx, `UPDATE mcp_servers SET auth = 'oauth' WHERE slug = 'gmail'`); err != nil {
		t.Fatal(err)
	}
	connectionstest.SetConnected(t, e.DB, e.ConnectionID, "")
	pool := host.New(host.Options{DB: e.DB, Credentials: fixedToken(goodToken)})

	out, err := pool.Call(ctx, e.ConnectionID, "list_labels", json.RawMessage(`{"limit":2}`))
	if err != nil || out != "id\tname\ttype\nLabel_15\tclients/Acme\tuser\nLabel_14\tReceipts\tuser\n" {
		t.Fatalf("list_labels: %q %v", out, err)
	}
	out, err = pool.Call(ctx, e.ConnectionID, "create_draft",
		json.RawMessage(`{"to":["bob@example.org"],"subject":"Minutes","body":"Attached below."}`))
	if err != nil || out != "draft\tmessage\tthread\nr-777\t18c9000000000002\t18c9000000000001\n" {
		t.Fatalf("create_draft: %q %v", out, err)
	}
	for _, r := range svc.find("") {
		if r.Header.Get("Authorization") != "Bearer "+goodToken {
			t.Fatalf("%s sent %q", r.URL.Path, r.Header.Get("Authorization"))
		}
	}
}
