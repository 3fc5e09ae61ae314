package connectors_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// BenchmarkResolve is the hot path: a fresh token served from memory.
// Compare with BenchmarkReuseTokenSource (docs/bench/connectors.md):
//
//	go test -run '^$' -bench 'Resolve|ReuseTokenSource' -benchmem -cpu 1,2 -count 6 ./internal/connectors/
func BenchmarkResolve(b *testing.B) {
	e := newEnv(b)
	e.addServer(b, "acme")
	id := e.addConnection(b, "acme")
	eng := e.engine(b, engineOpts{})
	e.connect(b, eng, id)
	r := eng.Resolver()
	ctx := context.Background()
	if _, err := r.Token(ctx, id); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c, err := r.Token(ctx, id)
			if err != nil || c.AccessToken == "" {
				panic("no token")
			}
		}
	})
}

// BenchmarkReuseTokenSource is the baseline: x/oauth2's caching token source
// over a static token.
func BenchmarkReuseTokenSource(b *testing.B) {
	ts := oauth2.ReuseTokenSource(nil, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "AT", Expiry: time.Now().Add(time.Hour)}))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t, err := ts.Token()
			if err != nil || t.AccessToken == "" {
				panic("no token")
			}
		}
	})
}

// TestHotPathAllocs pins the zero-allocation promise of the hot path.
func TestHotPathAllocs(t *testing.T) {
	e := newEnv(t)
	e.addServer(t, "acme")
	id := e.addConnection(t, "acme")
	eng := e.engine(t, engineOpts{})
	e.connect(t, eng, id)
	r := eng.Resolver()
	ctx := context.Background()
	if _, err := r.Token(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() { _, _ = r.Token(ctx, id) }); n != 0 {
		t.Fatalf("Token allocates %.1f times per call", n)
	}
	if n := testing.AllocsPerRun(1000, func() { _, _ = r.Injection(ctx, id) }); n != 0 {
		t.Fatalf("Injection allocates %.1f times per call", n)
	}
}
