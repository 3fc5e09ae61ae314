package wallet_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/adapters/host"
)

// The spend tools are written Off at the connection owner's scope on the
// first listing; an operator who turns send On keeps it On through a later
// sync; uniswap_swap is listed only with a Uniswap key. No key shows in the
// login's row, its listed tools, or the connect log of a failed check.
func TestSpendToolsStartOffAndStayAsTheOperatorSetsThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakes(t, "")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	e := adapterstest.NewWithHost(t, "wallet", f.URL(), host.Options{Log: log})

	// A check the service cannot answer is logged without any key.
	down := newFakes(t, "")
	down.Close()
	dead := adapterstest.NewWithHost(t, "wallet", down.URL(), host.Options{Log: log})
	if _, err := dead.ConnectValues(ctx, goodValues()); err == nil {
		t.Fatal("connected to a service that is down")
	}

	noUni := goodValues()
	delete(noUni, "uniswap_api_key")
	listed, err := e.ConnectValues(ctx, noUni)
	if err != nil || len(listed) != 11 {
		t.Fatalf("connect without a Uniswap key: %d tools, %v", len(listed), err)
	}
	for _, tool := range listed {
		if tool == "wallet_uniswap_swap" {
			t.Fatal("uniswap_swap listed without a Uniswap key")
		}
	}
	off := func() map[string]bool {
		rows, err := e.DB.Query(ctx, `SELECT catalog_id FROM bindings WHERE catalog_kind = 'mcp_tool' AND scope = 'organisation' AND NOT enabled`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]bool{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out[id] = true
		}
		return out
	}
	want := []string{"wallet_send", "wallet_call", "wallet_submit", "wallet_swap", "wallet_opensea_buy", "wallet_opensea_list",
		"wallet_opensea_accept_offer", "wallet_opensea_collection_offer", "wallet_opensea_cancel_order"}
	got := off()
	for _, w := range want {
		if !got[w] {
			t.Errorf("%s is not Off after the first listing (%v)", w, got)
		}
	}
	if got["wallet_get_balance"] || got["wallet_get_address"] || len(got) != len(want) {
		t.Errorf("Off after the first listing: %v", got)
	}

	// The operator turns send On; a later sync keeps it.
	if _, err := e.DB.Exec(ctx, `UPDATE bindings SET enabled = true WHERE catalog_id = 'wallet_send'`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Host.Sync(ctx, e.ConnectionID); err != nil {
		t.Fatal(err)
	}
	if got := off(); got["wallet_send"] || !got["wallet_call"] {
		t.Fatalf("after a later sync: %v", got)
	}

	// Every stored value is in the redaction set of a run of an agent under
	// the login's owner.
	var agent string
	if err := e.DB.QueryRow(ctx, `WITH g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'g' FROM organisations WHERE slug = 'acme' RETURNING id)
INSERT INTO agents (guild_id, name) SELECT id, 'a' FROM g RETURNING id::text`).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	redacted, err := e.Engine.RunSecrets(ctx, agent)
	if err != nil {
		t.Fatal(err)
	}
	for field, v := range noUni {
		if !slices.Contains(redacted, v) {
			t.Errorf("%s is not in the run's redaction set", field)
		}
	}

	hint := e.Hint(t)
	var tools string
	if err := e.DB.QueryRow(ctx, `SELECT string_agg(name || description || input_schema::text, ' ') FROM mcp_tools WHERE connection_id = $1`, e.ConnectionID).Scan(&tools); err != nil {
		t.Fatal(err)
	}
	for _, v := range goodValues() {
		bare := strings.TrimPrefix(v, "0x")
		for where, text := range map[string]string{"hint": hint, "tools": tools, "log": logs.String()} {
			if strings.Contains(text, bare) {
				t.Errorf("a key shows in the %s", where)
			}
		}
	}
	if !strings.Contains(logs.String(), "key check failed") {
		t.Fatalf("the failed check was not logged: %s", logs.String())
	}
}
