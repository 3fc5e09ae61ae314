package records_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/native/records"
	"github.com/guilds/guilds/internal/testdb"
)

// sqlCapture keeps the last statement sent that reads the records table.
type sqlCapture struct {
	mu   sync.Mutex
	sql  string
	args []any
}

func (c *sqlCapture) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "FROM records r") && !strings.HasPrefix(d.SQL, "EXPLAIN") {
		c.mu.Lock()
		c.sql, c.args = d.SQL, d.Args
		c.mu.Unlock()
	}
	return ctx
}

func (c *sqlCapture) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// The statements record_search and record_list send can be served by the
// trigram and full-text indexes. The test guards the shape of the SQL, not the
// planner's cost model: each statement is explained with the index under test
// as the only one it could use (see plan), so a condition that index cannot
// serve shows up as a sequential scan.
func TestSearchAndListUseTheTextIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(testdb.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	capture := &sqlCapture{}
	cfg.ConnConfig.Tracer = capture
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	var org string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	name := "companies"
	cols := []records.Column{{Name: "name", Type: records.TypeText, Required: true}, {Name: "city", Type: records.TypeText}}
	c, err := records.CreateCollection(ctx, db, org, records.CollectionInput{Name: &name, Columns: &cols})
	if err != nil {
		t.Fatal(err)
	}
	// 50,000 records; "zephyria" is in 1 name out of 2,500.
	_, err = db.Exec(ctx, `INSERT INTO records (collection_id, data, search_text)
		SELECT $1, d, (d->>'name') || E'\n' || (d->>'city') || E'\n' FROM (
			SELECT jsonb_build_object('name', 'firm ' || substr(md5(i::text), 1, 8) ||
				CASE WHEN i % 2500 = 7 THEN ' zephyria' ELSE '' END,
				'city', (ARRAY['paris','london','berlin','oslo'])[1 + i % 4]) AS d
			FROM generate_series(1, 50000) i) s`, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `ANALYZE records`); err != nil {
		t.Fatal(err)
	}
	// plan explains the last captured statement with only the named index
	// left on records (dropped inside a transaction that is rolled back) and
	// every path but a bitmap scan switched off. The planner then either uses
	// that index or falls back to a disabled sequential scan: the answer says
	// whether the statement can be served by the index, whatever ANALYZE's
	// random sample made of the costs.
	plan := func(index string) string {
		t.Helper()
		capture.mu.Lock()
		sql, args := capture.sql, capture.args
		capture.mu.Unlock()
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx) //nolint:errcheck
		for _, stmt := range []string{
			`SET LOCAL enable_seqscan = off`,
			`SET LOCAL enable_indexscan = off`,
			`SET LOCAL enable_indexonlyscan = off`,
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				t.Fatal(err)
			}
		}
		var others []string
		if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(indexname::text), '{}') FROM pg_indexes
			WHERE tablename = 'records' AND indexname <> $1 AND indexname <> 'records_pkey'`, index).Scan(&others); err != nil {
			t.Fatal(err)
		}
		for _, other := range others {
			if _, err := tx.Exec(ctx, "DROP INDEX "+pgx.Identifier{other}.Sanitize()); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := tx.Query(ctx, "EXPLAIN "+sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	check := func(what, index string) {
		t.Helper()
		if p := plan(index); !strings.Contains(p, "Bitmap Index Scan on "+index) || strings.Contains(p, "Seq Scan on records") {
			t.Errorf("%s is not planned on %s:\n%s", what, index, p)
		}
	}

	recs, err := records.Search(ctx, db, []records.Collection{c}, records.SearchQuery{Query: "zephyr"})
	if err != nil || len(recs) != 20 {
		t.Fatalf("search: %d %v", len(recs), err)
	}
	check("a single-token search", "records_text_trgm_idx")

	recs, err = records.Search(ctx, db, []records.Collection{c}, records.SearchQuery{Query: "zephyria -nothing"})
	if err != nil || len(recs) != 20 {
		t.Fatalf("word search: %d %v", len(recs), err)
	}
	check("a word search", "records_tsv_idx")

	res, err := records.List(ctx, db, c, records.ListQuery{Where: map[string]json.RawMessage{"name": json.RawMessage(`"zephyr"`)}})
	if err != nil || res.Total != 20 {
		t.Fatalf("list: %d %v", res.Total, err)
	}
	check("a list with a text where", "records_text_trgm_idx")
}
