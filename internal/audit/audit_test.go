package audit_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/testdb"
)

func TestParseFilterNamesTheMistake(t *testing.T) {
	for _, q := range []string{"agent_id=x", "from=yesterday", "limit=0", "limit=5000", "before=-1", "connection_id=1"} {
		v, _ := url.ParseQuery(q)
		if _, err := audit.ParseFilter(v); !errors.Is(err, audit.ErrBadFilter) {
			t.Errorf("%s: %v", q, err)
		}
	}
	v, _ := url.ParseQuery("tool=wallet_send&outcome=ok&from=2026-12-01T00:00:00Z&limit=10")
	f, err := audit.ParseFilter(v)
	if err != nil || f.Tool != "wallet_send" || f.Outcome != "ok" || f.Limit != 10 || f.From.IsZero() {
		t.Fatalf("%+v %v", f, err)
	}
}

// The export is the view's filter, every page of it: for each filter the
// JSON lines equal the events the view lists, in the same order.
func TestExportHoldsWhatTheViewShows(t *testing.T) {
	db := testdb.New(t)
	ctx := context.Background()
	var org, other string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('a', 'a') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('b', 'b') RETURNING id`).Scan(&other); err != nil {
		t.Fatal(err)
	}
	for i := range 250 {
		o, tool, outcome := org, "wallet_send", "ok"
		if i%3 == 0 {
			o = other
		}
		if i%5 == 0 {
			tool, outcome = "gmail_send", "denied"
		}
		if err := audit.Record(ctx, db, audit.Event{OrganisationID: o, Action: audit.ActionToolCall, Tool: tool,
			Outcome: outcome, RunID: fmt.Sprintf("00000000-0000-0000-0000-%012d", i), Seq: 1}); err != nil {
			t.Fatal(err)
		}
	}
	filters := []audit.Filter{
		{Orgs: []string{org}},
		{Orgs: []string{org}, Tool: "gmail_send"},
		{Outcome: "denied"},
		{Orgs: []string{org}, From: time.Now().Add(-time.Hour), Limit: 7},
	}
	for i, f := range filters {
		var shown []audit.Event
		page := f
		page.Limit = 50
		for {
			got, err := audit.List(ctx, db, page)
			if err != nil {
				t.Fatal(err)
			}
			shown = append(shown, got...)
			if len(got) < page.Limit {
				break
			}
			page.Before = got[len(got)-1].ID
		}
		var buf bytes.Buffer
		n, err := audit.Export(ctx, db, f, &buf)
		if err != nil || n != len(shown) {
			t.Fatalf("filter %d: exported %d, shown %d (%v)", i, n, len(shown), err)
		}
		sc := bufio.NewScanner(&buf)
		for j := 0; sc.Scan(); j++ {
			var e audit.Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.ID != shown[j].ID {
				t.Fatalf("filter %d line %d: %s", i, j, sc.Bytes())
			}
			if f.Orgs != nil && e.OrganisationID != org {
				t.Fatalf("filter %d exported another organisation's event", i)
			}
		}
	}
	// A tool call is recorded once, however often its write is retried.
	e := audit.Event{OrganisationID: org, Action: audit.ActionToolCall, Tool: "x", RunID: "00000000-0000-0000-0000-000000000999", Seq: 4}
	for range 2 {
		if err := audit.Record(ctx, db, e); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := audit.List(ctx, db, audit.Filter{RunID: e.RunID})
	if len(got) != 1 {
		t.Fatalf("a retried write recorded %d events", len(got))
	}
	if n, err := audit.Prune(ctx, db, time.Now().Add(time.Minute)); err != nil || n != 251 {
		t.Fatalf("prune: %d %v", n, err)
	}
}
