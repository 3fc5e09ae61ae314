package agentsecrets_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/tools"
)

// BenchmarkRunSecrets is what every tool call of a run adds to load its
// redaction set: one agent with 20 granted secrets (10 of the organisation,
// granted to its guild, and 10 of its own), opened from Postgres.
func BenchmarkRunSecrets(b *testing.B) {
	w, src := twentySecrets(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		vals, err := src.RunSecrets(ctx, w.agent)
		if err != nil || len(vals) != 20 {
			b.Fatalf("%d values, %v", len(vals), err)
		}
	}
}

// BenchmarkEnv is what a shell or script call adds to hand the same 20
// secrets to its command, their 20 audit reads included (one statement);
// compare with BenchmarkRunSecrets, the same reads without the audit.
func BenchmarkEnv(b *testing.B) {
	w, src := twentySecrets(b)
	ctx := context.Background()
	run := mustRun(b, w)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		env, err := src.Env(ctx, tools.Call{AgentID: w.agent, RunID: run, Seq: i + 1})
		if err != nil || len(env) != 20 {
			b.Fatalf("%d values, %v", len(env), err)
		}
	}
}

func twentySecrets(b *testing.B) (*world, agentsecrets.Source) {
	w := newWorld(b)
	ctx := context.Background()
	if _, err := agentsecrets.SetGrant(ctx, w.db, w.orgP, "X", w.guildP, true, "b"); err == nil {
		b.Fatal("grant of a missing secret")
	}
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("ORG_KEY_%d", i)
		if _, _, err := agentsecrets.Set(ctx, w.db, w.kr, w.orgP, name, fmt.Sprintf("org-value-%d-0123456789", i), "b"); err != nil {
			b.Fatal(err)
		}
		if _, err := agentsecrets.SetGrant(ctx, w.db, w.orgP, name, w.guildP, true, "b"); err != nil {
			b.Fatal(err)
		}
		if _, _, err := agentsecrets.Set(ctx, w.db, w.kr, w.agentP, fmt.Sprintf("OWN_KEY_%d", i), fmt.Sprintf("own-value-%d-0123456789", i), "b"); err != nil {
			b.Fatal(err)
		}
	}
	return w, agentsecrets.Source{DB: w.db, Keyring: w.kr}
}
