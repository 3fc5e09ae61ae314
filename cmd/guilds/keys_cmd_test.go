package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// `guilds keys rotate` reports every sealed table, re-seals organisation
// model keys, and exits non-zero (naming the key) while a row is under a key
// GUILDS_ENCRYPTION_KEY lacks.
func TestKeysRotateReportsEveryTable(t *testing.T) {
	ctx := context.Background()
	dbURL := testdb.URL(t)
	db, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	t.Setenv("DATABASE_URL", dbURL)
	k1, _ := secret.GenerateKey("k1")
	kr1, _ := secret.ParseKeyring(k1)
	var org string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := models.SetOrgKey(ctx, db, kr1, org, "openrouter", "sk-or-org"); err != nil {
		t.Fatal(err)
	}

	k2, _ := secret.GenerateKey("k2")
	t.Setenv("GUILDS_ENCRYPTION_KEY", k2) // k1 dropped too early
	code, out, errs := runConn(t, keysCommand, "", "rotate")
	if code == 0 || !strings.Contains(errs, `key "k1"`) || !strings.Contains(errs, "organisation_model_keys") || strings.Contains(out, "older keys may be dropped") {
		t.Fatalf("rotate with k1 missing: %d\n%s%s", code, out, errs)
	}

	t.Setenv("GUILDS_ENCRYPTION_KEY", k2+","+k1)
	code, out, errs = runConn(t, keysCommand, "", "rotate")
	if code != 0 || !strings.Contains(out, "organisation_model_keys") || !strings.Contains(out, "re-sealed 1,") ||
		!strings.Contains(out, "connection_credentials") || !strings.Contains(out, "connection_oauth_pending") {
		t.Fatalf("rotate: %d\n%s%s", code, out, errs)
	}
	kr2, _ := secret.ParseKeyring(k2)
	if k, err := models.OrgKey(ctx, db, kr2, org, "openrouter"); err != nil || k != "sk-or-org" {
		t.Fatalf("org key with only k2 after rotate: %v", err)
	}
}

// Every table with a key_id column holds sealed values: its owner declares
// it and main registers it, so rotation and the start-up check cover it.
func TestRotationCoversEverySealedTable(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rows, err := db.Query(ctx, `SELECT table_name FROM information_schema.columns
WHERE column_name = 'key_id' AND table_schema = current_schema() ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		want[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, name := range sealedRegistry().Names() {
		delete(want, name)
	}
	if len(want) != 0 {
		t.Fatalf("tables with sealed values that no owner registers for rotation: %v", want)
	}
}
