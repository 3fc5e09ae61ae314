package records_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/migrate"
	"github.com/guilds/guilds/internal/native/records"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

// benchRows is the size of the benchmark collection.
const benchRows = 1_000_000

// benchNeedle appears in 1 record out of 20,000 (50 in all).
const benchNeedle = "zephyr"

// benchDB opens the persistent benchmark database, creating, migrating and
// filling it on first use (one INSERT … SELECT generate_series), so later
// runs start at once. It only runs inside benchmarks, never under plain
// go test. BENCH_DATABASE_URL overrides the database.
func benchDB(b *testing.B) (*pgxpool.Pool, records.Collection) {
	b.Helper()
	ctx := context.Background()
	url := os.Getenv("BENCH_DATABASE_URL")
	if url == "" {
		url = strings.Replace(testdb.ServerURL(), "/postgres?", "/guilds_bench_records?", 1)
	}
	if err := store.EnsureDatabase(ctx, url); err != nil {
		b.Fatal(err)
	}
	db, err := pgxpool.New(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	if _, err := migrate.Up(ctx, db); err != nil {
		b.Fatal(err)
	}
	c, err := records.CollectionByName(ctx, db, benchOrg(ctx, b, db), "companies")
	if err == nil {
		return db, c
	}
	org := benchOrg(ctx, b, db)
	cols := []records.Column{
		{Name: "name", Type: records.TypeText, Required: true},
		{Name: "city", Type: records.TypeText},
		{Name: "note", Type: records.TypeText},
		{Name: "score", Type: records.TypeNumber},
	}
	name := "companies"
	c, err = records.CreateCollection(ctx, db, org, records.CollectionInput{Name: &name, Columns: &cols})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("filling %d records (once)…", benchRows)
	_, err = db.Exec(ctx, `
		WITH words AS (SELECT ARRAY['acme','globex','initech','umbrella','hooli','stark','wayne','wonka','tyrell','cyberdyne',
			'soylent','aperture','vandelay','monarch','oscorp','gringotts','duff','krusty','nakatomi','weyland'] AS w,
			ARRAY['paris','london','berlin','madrid','rome','lisbon','vienna','prague','dublin','oslo'] AS c),
		g AS (SELECT i, w, c FROM generate_series(1, $2::int) i, words)
		INSERT INTO records (collection_id, data, search_text, created_at, updated_at)
		SELECT $1, d, d->>'name' || E'\n' || (d->>'city') || E'\n' || (d->>'note') || E'\n' || (d->>'score') || E'\n',
			now() - make_interval(secs => $2 - i), now() - make_interval(secs => $2 - i)
		FROM (SELECT i, jsonb_build_object(
			'name', w[1 + i % 20] || ' ' || w[1 + (i / 20) % 20] || ' ' || substr(md5(i::text), 1, 6)
				|| CASE WHEN i % 20000 = 7 THEN ' `+benchNeedle+`ia' ELSE '' END,
			'city', c[1 + (i / 7) % 10],
			'note', 'customer since ' || (2000 + i % 25) || ' ' || substr(md5((i * 7)::text), 1, 10),
			'score', i % 1000) AS d FROM g) s`, c.ID, benchRows)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(ctx, `VACUUM ANALYZE records`); err != nil {
		b.Fatal(err)
	}
	return db, c
}

func benchOrg(ctx context.Context, b *testing.B, db *pgxpool.Pool) string {
	var id string
	err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Bench', 'bench')
		ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name RETURNING id`).Scan(&id)
	if err != nil {
		b.Fatal(err)
	}
	return id
}

func BenchmarkSearchSingleToken(b *testing.B) {
	db, c := benchDB(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		recs, err := records.Search(ctx, db, []records.Collection{c}, records.SearchQuery{Query: benchNeedle})
		if err != nil || len(recs) != 20 {
			b.Fatalf("%d %v", len(recs), err)
		}
	}
}

func BenchmarkSearchWords(b *testing.B) {
	db, c := benchDB(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		recs, err := records.Search(ctx, db, []records.Collection{c}, records.SearchQuery{Query: `zephyria -nothing`})
		if err != nil || len(recs) != 20 {
			b.Fatalf("%d %v", len(recs), err)
		}
	}
}

func BenchmarkListWhereText(b *testing.B) {
	db, c := benchDB(b)
	ctx := context.Background()
	where := map[string]json.RawMessage{"name": json.RawMessage(`"` + benchNeedle + `"`)}
	b.ReportAllocs()
	for b.Loop() {
		res, err := records.List(ctx, db, c, records.ListQuery{Where: where})
		if err != nil || res.Total != benchRows/20000 {
			b.Fatalf("%d %v", res.Total, err)
		}
	}
}

// BenchmarkNaiveILIKE is what an implementation without the trigram text
// would do: a sequential ILIKE over every record's JSON.
func BenchmarkNaiveILIKE(b *testing.B) {
	db, c := benchDB(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rows, err := db.Query(ctx, `SELECT id, data, created_at, updated_at FROM records
			WHERE collection_id = $1 AND deleted_at IS NULL AND data::text ILIKE $2
			ORDER BY updated_at DESC LIMIT 20`, c.ID, "%"+benchNeedle+"%")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if n != 20 {
			b.Fatalf("%d", n)
		}
	}
}

// BenchmarkNaiveILIKEWhere is the naive column filter with a total.
func BenchmarkNaiveILIKEWhere(b *testing.B) {
	db, c := benchDB(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var n int
		err := db.QueryRow(ctx, `SELECT count(*) FROM records
			WHERE collection_id = $1 AND deleted_at IS NULL AND data->>'name' ILIKE $2`, c.ID, "%"+benchNeedle+"%").Scan(&n)
		if err != nil || n != benchRows/20000 {
			b.Fatalf("%d %v", n, err)
		}
	}
}
