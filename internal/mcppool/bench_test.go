package mcppool_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// BenchmarkCall compares a call through the pool with a bare mcp-go client,
// on a server of each protocol era.
func BenchmarkCall(b *testing.B) {
	for _, era := range []struct {
		name      string
		newRemote func(testing.TB, string) *remote
	}{{"handshake", newRemote}, {"stateless", newStatelessRemote}} {
		b.Run(era.name, func(b *testing.B) { benchmarkCall(b, era.newRemote) })
	}
}

func benchmarkCall(b *testing.B, newRemote func(testing.TB, string) *remote) {
	ctx := context.Background()
	db := testdb.New(b)
	rs := newRemote(b, "Authorization")
	rs.allow("Bearer " + benchToken)
	id := addConnection(b, db, "notion", rs.URL, "oauth", `{}`)
	args := json.RawMessage(`{"text":"hello"}`)

	b.Run("pool", func(b *testing.B) {
		cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {benchToken}}}
		p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
		defer p.Close()
		listening(b, p)
		if _, err := p.Call(ctx, id, "echo", args); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := p.Call(ctx, id, "echo", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		c := bareClient(b, rs.URL, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + benchToken}))
		req := mcp.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = args
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := c.CallTool(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCallPaired is BenchmarkCall with the pool and the bare client
// taking turns, one call each per iteration (the first of the pair
// alternating), so that a loaded machine slows both alike. It reports each
// one's time per call and their ratio, the figure to compare on a shared box.
//
// The 2026-07-28 wire carries the client's declarations in every request's
// _meta. The pool declares its client info and elicitation to every server,
// and the Apps and Tasks extensions to a server that lists them
// (stateless-advertised). In the -declared arms the bare client declares
// what the pool declares to that server: the two then send the same bytes,
// and the ratio is the pool's own work.
func BenchmarkCallPaired(b *testing.B) {
	for _, era := range []struct {
		name      string
		newRemote func(testing.TB, string) *remote
		declared  bool
	}{
		{"handshake", newRemote, false},
		{"stateless", newStatelessRemote, false},
		{"stateless-declared", newStatelessRemote, true},
		{"stateless-advertised", newAdvertisingRemote, false},
		{"stateless-advertised-declared", newAdvertisingRemote, true},
	} {
		b.Run(era.name, func(b *testing.B) {
			ctx := context.Background()
			db := testdb.New(b)
			rs := era.newRemote(b, "Authorization")
			rs.allow("Bearer " + benchToken)
			id := addConnection(b, db, "notion", rs.URL, "oauth", `{}`)
			args := json.RawMessage(`{"text":"hello"}`)
			p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {benchToken}}}})
			defer p.Close()
			listening(b, p)
			hdr := transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + benchToken})
			var c *client.Client
			if era.declared {
				c = declaringClient(b, rs.URL, rs.extensions, hdr)
			} else {
				c = bareClient(b, rs.URL, hdr)
			}
			req := mcp.CallToolRequest{}
			req.Params.Name = "echo"
			req.Params.Arguments = args
			poolCall := func() {
				if _, err := p.Call(ctx, id, "echo", args); err != nil {
					b.Fatal(err)
				}
			}
			bareCall := func() {
				if _, err := c.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			poolCall()
			bareCall()
			var inPool, inBare time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				i++
				t0 := time.Now()
				if i%2 == 0 {
					poolCall()
					t1 := time.Now()
					bareCall()
					inPool, inBare = inPool+t1.Sub(t0), inBare+time.Since(t1)
				} else {
					bareCall()
					t1 := time.Now()
					poolCall()
					inBare, inPool = inBare+t1.Sub(t0), inPool+time.Since(t1)
				}
			}
			b.ReportMetric(float64(inPool.Nanoseconds())/float64(i)/1e3, "pool-µs/call")
			b.ReportMetric(float64(inBare.Nanoseconds())/float64(i)/1e3, "bare-µs/call")
			b.ReportMetric(float64(inPool)/float64(inBare), "pool/bare")
		})
	}
}

// BenchmarkRunStartListing compares a run start served by the stored list
// (fresh: one query) with a remote tools/list plus persisting it.
func BenchmarkRunStartListing(b *testing.B) {
	ctx := context.Background()
	db := testdb.New(b)
	rs := newRemote(b, "Authorization")
	rs.allow("Bearer " + benchToken)
	id := addConnection(b, db, "notion", rs.URL, "oauth", `{}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {benchToken}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	defer p.Close()
	if _, err := p.Sync(ctx, id); err != nil {
		b.Fatal(err)
	}
	b.Run("stored", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Refresh(ctx, id, mcppool.ListMaxAge); err != nil {
				b.Fatal(err)
			}
			if _, err := mcppool.Stored(ctx, db, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("remote", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Sync(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// listening waits for the pool to hear the login channel, so that what is
// timed is the steady state, where a call reads no row (ADR 0627). On a
// loaded database the LISTEN can take seconds; until it is done every call
// reads the row twice, which is not what the benchmark is after.
func listening(b *testing.B, p *mcppool.Pool) {
	b.Helper()
	waitFor(b, "the pool to listen for login changes", func() bool { return mcppool.Listening(p) })
}

// benchToken is as long as a real token, so that the answer's redaction
// has a value to look for, as it does in production.
const benchToken = "bench-token-0123456789abcdef0123456789"

// declaringClient is bareClient declaring what the pool's sessions declare to
// a server that lists advertised in its capabilities.extensions.
func declaringClient(b testing.TB, url string, advertised map[string]any, opts ...transport.StreamableHTTPCOption) *client.Client {
	b.Helper()
	ctx := context.Background()
	info, co, extensions := mcppool.Declaring(advertised)
	t, err := transport.NewStreamableHTTP(url, opts...)
	if err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(t, co...)
	b.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = info
	init.Params.Capabilities.Extensions = extensions
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	return c
}

// bareClient is an initialised mcp-go client of url, closed when b ends.
func bareClient(b testing.TB, url string, opts ...transport.StreamableHTTPCOption) *client.Client {
	b.Helper()
	ctx := context.Background()
	c, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	return c
}
