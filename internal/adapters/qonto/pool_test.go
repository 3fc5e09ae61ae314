package qonto_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/adapters/qonto/qontotest"
)

// The registered adapter behind the session pool on a real Postgres: Connect
// takes the login and the secret key as two fields, refuses a pair the
// service refuses, stores the good one with the manifest's tools and the
// organisation's name, and calls reach the service with login:secret_key as
// the header.
func TestThroughThePool(t *testing.T) {
	t.Parallel()
	svc := qontotest.New(t)
	adapterstest.Run(t, adapterstest.Spec{
		Slug: "qonto", URL: svc.URL,
		BadValues:  []map[string]string{{"login": login, "secret_key": "not-the-secret"}, {"login": "other-org-1", "secret_key": secretKey}},
		GoodValues: map[string]string{"login": login, "secret_key": secretKey},
		Secrets:    []string{login, secretKey},
		Tools:      4, Listed: []string{"qonto_list_bank_accounts"}, Hint: "Acme SAS",
		Calls: []adapterstest.Call{
			{Tool: "list_bank_accounts", Lines: 3, Want: []string{mainID + "\tMain account\t"}},
			{Tool: "list_missing_invoices", Args: `{"limit":2}`, Lines: 3, Check: func(t *testing.T, out string, _ error) {
				if !strings.HasPrefix(lines(out)[1], txID(2, 0)+"\t") {
					t.Fatalf("list_missing_invoices: %q", out)
				}
			}},
			{Tool: "upload_invoice", Args: `{"transaction_id":"` + txID(1, 0) + `","path":"/home/agent/a.pdf"}`,
				WantErr: true, Want: []string{"agent workspace"}},
		},
	})
}
