package mcppool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// hintingServer speaks Streamable HTTP (JSON answers) by hand and puts a
// ttlMs caching hint on its tools/list results (SEP-2549): ttl < 0 sends none.
type hintingServer struct {
	*httptest.Server
	ttl   atomic.Int64
	lists atomic.Int64
}

func newHintingServer(t *testing.T) *hintingServer {
	h := &hintingServer{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "hinting", "version": "1"}}
		case "tools/list":
			h.lists.Add(1)
			res := map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}}
			if ttl := h.ttl.Load(); ttl >= 0 {
				res["ttlMs"], res["cacheScope"] = ttl, "private"
			}
			result = res
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}`, req.ID)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(h.Close)
	return h
}

// A listing's ttlMs hint decides when a run start lists again: 0 lists
// every time, an hour keeps the stored list past the platform's maxAge
// (bounded by MaxListTTL), and a server without hints gets maxAge.
func TestRefreshHonoursTheListingTTLHint(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	srv := newHintingServer(t)
	id := addConnection(t, db, "hinting", srv.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	refresh := func(maxAge time.Duration) int64 {
		t.Helper()
		if err := p.Refresh(ctx, id, maxAge); err != nil {
			t.Fatal(err)
		}
		return srv.lists.Load()
	}

	srv.ttl.Store(0) // immediately stale
	if n := refresh(mcppool.ListMaxAge); n != 1 {
		t.Fatalf("first refresh listed %d times", n)
	}
	if n := refresh(mcppool.ListMaxAge); n != 2 {
		t.Fatalf("ttlMs 0: a stored list within maxAge was reused (%d listings)", n)
	}
	srv.ttl.Store(time.Hour.Milliseconds())
	if n := refresh(mcppool.ListMaxAge); n != 3 { // the stored list still had the hint 0
		t.Fatalf("%d listings", n)
	}
	if n := refresh(time.Nanosecond); n != 3 {
		t.Fatalf("ttlMs one hour: a maxAge of 1ns listed again (%d listings)", n)
	}
	srv.ttl.Store(-1) // no hint: maxAge decides again
	if _, err := db.Exec(ctx, `UPDATE mcp_tools SET listed_at = now() - interval '2 hours' WHERE connection_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if n := refresh(mcppool.ListMaxAge); n != 4 {
		t.Fatalf("past MaxListTTL the list must be listed again (%d listings)", n)
	}
	if n := refresh(mcppool.ListMaxAge); n != 4 {
		t.Fatalf("without a hint a list within maxAge must be reused (%d listings)", n)
	}
	if n := refresh(time.Nanosecond); n != 5 {
		t.Fatalf("without a hint maxAge decides (%d listings)", n)
	}
}
