package connectors

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

func TestSlotTable(t *testing.T) {
	tab := newSlotTable(16)
	ids := make([]uuid.UUID, 500)
	slots := make([]*slot, 500)
	for i := range ids {
		ids[i] = uuid.New()
		if i%7 == 0 && i > 0 { // same low bits as a previous id: forces probing
			copy(ids[i][:8], ids[i-1][:8])
		}
		slots[i] = &slot{}
		tab = tab.with(ids[i], slots[i])
	}
	for i, id := range ids {
		if tab.get(id) != slots[i] {
			t.Fatalf("id %d not found", i)
		}
	}
	if tab.get(uuid.New()) != nil {
		t.Fatal("unknown id found")
	}
	if len(tab.entries) < 2*len(ids) {
		t.Fatalf("table over half full: %d entries for %d ids", len(tab.entries), len(ids))
	}
}

// TestLoserNeverOverwritesWinner: a refresher that read version v and failed
// (e.g. invalid_grant because the winner already rotated the token) cannot
// mark the winner's fresh credential dead, and cannot overwrite it.
func TestLoserNeverOverwritesWinner(t *testing.T) {
	ctx := context.Background()
	pool := testdb.New(t)
	k, _ := secret.GenerateKey("k1")
	kr, _ := secret.ParseKeyring(k)
	var serverID string
	if err := pool.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, auth) VALUES ('x', 'x', 'http', 'oauth') RETURNING id::text`).Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	id := uuid.MustParse(connectionstest.Insert(t, pool, serverID, "platform", ""))
	v1, err := putCredential(ctx, pool, kr, id, Credential{AccessToken: "a1", RefreshToken: "r1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	keyID, ct, _ := seal(kr, id, Credential{AccessToken: "a2", RefreshToken: "r2"})
	v2, err := saveRefreshed(ctx, pool, id, v1, keyID, ct, timeZero)
	if err != nil || v2 != v1+1 {
		t.Fatalf("winner: %d %v", v2, err)
	}
	if _, _, err := recordFailure(ctx, pool, id, v1, true, "invalid_grant"); !errors.Is(err, errFenced) {
		t.Fatalf("loser's failure: %v", err)
	}
	if _, err := saveRefreshed(ctx, pool, id, v1, keyID, ct, timeZero); !errors.Is(err, errFenced) {
		t.Fatalf("loser's write: %v", err)
	}
	rec, err := readRecord(ctx, pool, id)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := unseal(kr, id, rec.ct)
	if rec.conn.Health.State != HealthHealthy || rec.conn.Status != StatusConnected || c.RefreshToken != "r2" || rec.version != v2 {
		t.Fatalf("winner's credential damaged: %+v %s", rec.conn.Health, rec.conn.Status)
	}
}

func TestClassifyOAuthErrorCodesAreSafe(t *testing.T) {
	if got := safeCode("invalid_grant"); got != "invalid_grant" {
		t.Fatal(got)
	}
	if got := safeCode(`AT-123 "secret"`); got != "oauth_error" {
		t.Fatal(got)
	}
}

var timeZero = func() (t time.Time) { return }()

// Each part of a two-part key joins the redaction set, beside the whole key.
func TestCompositeKeyPartsAreSecrets(t *testing.T) {
	got := Credential{AccessToken: "acme-sas-4821:sk_live_0123456789"}.values()
	want := map[string]bool{"acme-sas-4821:sk_live_0123456789": true, "acme-sas-4821": true, "sk_live_0123456789": true}
	if len(got) != len(want) {
		t.Fatalf("values = %q", got)
	}
	for _, v := range got {
		if !want[v] {
			t.Fatalf("values = %q", got)
		}
	}
	if got := (Credential{AccessToken: "plain-token"}).values(); len(got) != 1 {
		t.Fatalf("a plain token: %q", got)
	}
}
