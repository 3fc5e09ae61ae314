package browserproxy

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/mcpoauth"
)

// An agent holds at most MaxConnsPerAgent connections on its socket; one
// more is answered 503 naming the setting, and a closed one frees its place.
func TestConnectionsPerAgentAreCapped(t *testing.T) {
	p, err := New(Options{Dir: t.TempDir(), Policy: mcpoauth.Policy{}, MaxConnsPerAgent: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if _, err := p.Open("agent-1"); err != nil {
		t.Fatal(err)
	}
	d, _ := p.AgentDir("agent-1")
	sock := filepath.Join(d, "proxy.sock")

	var held []net.Conn
	for range 2 {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	t.Cleanup(func() {
		for _, c := range held {
			_ = c.Close()
		}
	})
	status, body := connect(t, sock, "169.254.169.254:80")
	if status != 503 || !strings.Contains(body, "GUILDS_MAX_PROXY_CONNS_PER_AGENT") {
		t.Fatalf("a third connection: %d %q", status, body)
	}

	_ = held[0].Close()
	// The place comes back once the proxy has seen the close.
	for i := 0; ; i++ {
		status, body = connect(t, sock, "169.254.169.254:80")
		if status != 503 {
			break
		}
		if i > 600 {
			t.Fatalf("the closed connection's place never came back: %q", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status != 403 {
		t.Fatalf("after a close the policy answers, got %d %q", status, body)
	}
}
