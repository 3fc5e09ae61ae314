package qonto_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/mcppool"
)

// The registered adapter behind the session pool on a real Postgres: Connect
// refuses a key without its login half and a key the service refuses, stores
// the good one with the manifest's tools and the organisation's name, and
// calls reach the service with login:secret_key as the header.
func TestThroughThePool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t)
	e := adapterstest.New(t, "qonto", svc.URL)
	id, pool, login := e.ConnectionID, e.Pool, e.Login

	for _, bad := range []string{secretKey, "acme-sas-4821:not-the-secret"} {
		if _, err := login.Connect(ctx, id, bad); !errors.Is(err, mcppool.ErrKeyRejected) {
			t.Fatalf("bad key: %v", err)
		}
	}
	if n := e.Scalar(t, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected key was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, goodKey)
	if err != nil || len(listed) != 4 || listed[0].Name != "qonto_list_bank_accounts" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := e.Scalar(t, `SELECT status || ' ' || account_hint FROM mcp_connections WHERE id = $1`, id); got != "connected Acme SAS" {
		t.Fatalf("connection: %q", got)
	}

	out, err := pool.Call(ctx, id, "list_bank_accounts", json.RawMessage(`{}`))
	if err != nil || len(lines(out)) != 3 || !strings.Contains(out, mainID+"\tMain account\t") {
		t.Fatalf("list_bank_accounts: %q %v", out, err)
	}
	noKey(t, out, err)
	out, err = pool.Call(ctx, id, "list_missing_invoices", json.RawMessage(`{"limit":2}`))
	if err != nil || len(lines(out)) != 3 || !strings.HasPrefix(lines(out)[1], txID(2, 0)+"\t") {
		t.Fatalf("list_missing_invoices: %q %v", out, err)
	}
	noKey(t, out, err)
	_, err = pool.Call(ctx, id, "upload_invoice", json.RawMessage(`{"transaction_id":"`+txID(1, 0)+`","path":"/home/agent/a.pdf"}`))
	if err == nil || !strings.Contains(err.Error(), "agent workspace") {
		t.Fatalf("upload_invoice through the pool: %v", err)
	}
	noKey(t, "", err)
}
