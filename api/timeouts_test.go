package api_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/runs"
)

// serveWithTimeouts runs the API as ServeOn builds it, with its timeouts
// shortened so that a test outlives them.
func serveWithTimeouts(t *testing.T, e *apitest.Env, d time.Duration) string {
	srv := e.Server.HTTPServer()
	srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout = d, d, d, d
	hs := httptest.NewUnstartedServer(srv.Handler)
	hs.Config = srv
	hs.Start()
	t.Cleanup(hs.Close)
	return hs.URL
}

// A client that never finishes its headers is cut off; the run event stream
// outlives the read and write timeouts.
func TestServerTimeoutsSpareTheEventStream(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, guild, agent := e.Hierarchy()
	base := serveWithTimeouts(t, e, 300*time.Millisecond)

	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Write([]byte("GET /api/orgs HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Read(make([]byte, 512)); err == nil {
		// Go answers 408 to a header read that timed out, then closes.
		if _, err := c.Read(make([]byte, 512)); err == nil {
			t.Fatal("a client with unfinished headers kept its connection")
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a client with unfinished headers kept its connection")
	}

	var runID string
	if err := e.DB.QueryRow(context.Background(), `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, status, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 'running', 5, 5) RETURNING id`, agent, guild, org).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", base+"/api/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+e.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("events: %d", resp.StatusCode)
	}
	time.Sleep(time.Second) // past every timeout of the server
	if err := runs.Finish(context.Background(), e.DB, runID, runs.StatusCompleted, ""); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"completed"`) {
			return
		}
	}
	t.Fatalf("the stream ended before the run's final status: %v", sc.Err())
}
