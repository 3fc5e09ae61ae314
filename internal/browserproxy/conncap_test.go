package browserproxy

import (
	"fmt"
	"io"
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

	// The proxy answers a refused CONNECT that asks to close and then closes
	// its side; once this end reads that close, the place is back.
	_ = held[0].SetDeadline(time.Now().Add(time.Minute))
	fmt.Fprint(held[0], "CONNECT 169.254.169.254:80 HTTP/1.1\r\nHost: 169.254.169.254:80\r\nConnection: close\r\n\r\n")
	if _, err := io.ReadAll(held[0]); err != nil {
		t.Fatalf("the proxy did not close the connection: %v", err)
	}
	status, body = connect(t, sock, "169.254.169.254:80")
	if status != 403 {
		t.Fatalf("after a close the policy answers, got %d %q", status, body)
	}
}
