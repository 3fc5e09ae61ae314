package studio_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/studio"
	"github.com/guilds/guilds/internal/testdb"
)

// BenchmarkStudioOfALongRun assembles the studio of an issue whose run made
// 200 calls, the last failing: the issue, the run, the call list, the
// snapshot's tool and the switch walk.
func BenchmarkStudioOfALongRun(b *testing.B) {
	db := testdb.New(b)
	ctx := context.Background()
	var org, guild, agent, run, issue string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Bench', 'bench') RETURNING id`).Scan(&org); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'G') RETURNING id`, org).Scan(&guild); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name) VALUES ($1, 'A') RETURNING id`, guild).Scan(&agent); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, status, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 'completed', 500, 300) RETURNING id`, agent, guild, org).Scan(&run); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO run_snapshots (run_id, tools) VALUES ($1,
		'[{"name":"note_write","kind":"native","description":"Write a note","class":"default","schema":{"type":"object"}}]')`, run); err != nil {
		b.Fatal(err)
	}
	for i := 1; i <= 200; i++ {
		outcome := "ok"
		if i == 200 {
			outcome = "error"
		}
		if _, err := db.Exec(ctx, `INSERT INTO tool_calls (run_id, seq, call_id, tool_name, arguments, result, outcome, started_at, finished_at)
			VALUES ($1, $2, $3, 'note_write', '{"key":"k"}', 'a result of some length', $4, now(), now())`, run, i*2, fmt.Sprint("c", i), outcome); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.QueryRow(ctx, `INSERT INTO tooling_issues (guild_id, agent_id, run_id, kind, summary) VALUES ($1, $2, $3, 'tool_failure', 'x')
		RETURNING id`, guild, agent, run).Scan(&issue); err != nil {
		b.Fatal(err)
	}
	p := access.Principal{Admin: true}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		v, err := studio.Load(ctx, db, p, issue, 0)
		if err != nil || v.Call == nil || v.Call.Seq != 400 || v.Walk == nil {
			b.Fatalf("studio: %+v, %v", v.Call, err)
		}
	}
}
