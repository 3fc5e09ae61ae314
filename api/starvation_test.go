package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// probe sends one request and reports its status; a client deadline turns a
// hung API into a failure instead of a hung test.
func probe(base, token, method, path, body string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// blockingServer is a real MCP server whose "wait" tool blocks until release
// is closed; entered counts the calls that reached it.
func blockingServer(t *testing.T, release <-chan struct{}, entered *atomic.Int32) string {
	s := server.NewMCPServer("slow", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("wait"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		entered.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return mcp.NewToolResultText("released"), nil
	})
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true))
	return newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer slow-key" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// Twenty Test calls waiting on a slow server hold no transaction and no
// pooled connection: reads and writes are answered meanwhile (the test
// database's pool has only four connections).
func TestConcurrentTestCallsDoNotStarveTheAPI(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	release := make(chan struct{})
	var entered atomic.Int32
	addServer(t, me.DB, "slow", blockingServer(t, release, &entered), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "slow", "owner_scope": "organisation", "owner_id": org, "key": "slow-key"})
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)

	const calls = 20
	var wg sync.WaitGroup
	statuses := make([]int, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = probe(me.HTTP.URL, me.AdminToken, "POST", "/api/mcp/connections/"+id+"/call", `{"tool":"wait"}`)
		}()
	}
	defer func() {
		close(release)
		wg.Wait()
		for i, st := range statuses {
			if st != 200 {
				t.Errorf("test call %d: %d", i, st)
			}
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); entered.Load() < calls; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d test calls reached the server", entered.Load(), calls)
		}
	}

	if st, err := probe(me.HTTP.URL, me.AdminToken, "GET", "/api/orgs", ""); err != nil || st != 200 {
		t.Fatalf("GET /api/orgs during the calls: %d %v", st, err)
	}
	if st, err := probe(me.HTTP.URL, me.AdminToken, "POST", "/api/orgs", `{"name":"During the calls"}`); err != nil || st != 201 {
		t.Fatalf("POST /api/orgs during the calls: %d %v", st, err)
	}
	var idle int
	err := me.DB.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND state LIKE 'idle in transaction%'`).Scan(&idle)
	if err != nil {
		t.Fatal(err)
	}
	if idle != 0 {
		t.Fatalf("%d connections sit idle in a transaction while the test calls wait", idle)
	}
}

// Clients that send their headers and then trickle the body hold no
// transaction: other requests are answered while they dawdle.
func TestSlowBodyFloodDoesNotStarveTheAPI(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	addr := strings.TrimPrefix(me.HTTP.URL, "http://")
	const flood = 12
	before := me.DB.Stat().AcquireCount()
	for range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		fmt.Fprintf(c, "POST /api/orgs HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"na", addr, me.AdminToken)
	}
	// Every flooding request has been authenticated (one acquire each) and
	// now waits for the rest of its body.
	for deadline := time.Now().Add(30 * time.Second); me.DB.Stat().AcquireCount() < before+flood; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the flood's requests were not all authenticated")
		}
	}
	for i := range 3 {
		if st, err := probe(me.HTTP.URL, me.AdminToken, "GET", "/api/orgs", ""); err != nil || st != 200 {
			t.Fatalf("GET %d during the flood: %d %v", i, st, err)
		}
		if st, err := probe(me.HTTP.URL, me.AdminToken, "POST", "/api/orgs", fmt.Sprintf(`{"name":"Flood %d"}`, i)); err != nil || st != 201 {
			t.Fatalf("POST %d during the flood: %d %v", i, st, err)
		}
	}
}
