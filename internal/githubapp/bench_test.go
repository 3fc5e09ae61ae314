package githubapp_test

import (
	"context"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/githubapp/githubtest"
)

// BenchmarkAppJWT signs the App token (RS256, 2048-bit key) as every round
// of App calls does.
func BenchmarkAppJWT(b *testing.B) {
	cfg := githubtest.New(b).Config()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cfg.AppJWT(time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerationStart is a coding generation's start with one selected
// repository already cloned: a token from the local GitHub, the tokens file
// through the sandbox file API, and a git pull (local driver).
func BenchmarkGenerationStart(b *testing.B) {
	e := newGenEnv(b)
	ctx := context.Background()
	if _, err := e.g.Prepare(ctx, e.agent); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.g.Prepare(ctx, e.agent); err != nil {
			b.Fatal(err)
		}
	}
}
