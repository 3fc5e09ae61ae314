package browserproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/browserproto"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// open starts a proxy with the policy and returns the agent's socket on
// the host.
func open(t *testing.T, policy mcpoauth.Policy) string {
	t.Helper()
	p, err := New(Options{Dir: t.TempDir(), Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if got, err := p.Open("agent-1"); err != nil || got != browserproto.ProxySocket {
		t.Fatalf("Open = %q, %v", got, err)
	}
	d, err := p.AgentDir("agent-1")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(d, "proxy.sock")
}

// client is a browser's view of the proxy: plain http in absolute form,
// https through CONNECT.
func client(sock string) *http.Client {
	proxy, _ := url.Parse("http://proxy.invalid")
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(proxy),
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the test's own certificate
	}}
}

// connect sends one CONNECT and returns the status line and body.
func connect(t *testing.T, sock, hostPort string) (int, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostPort, hostPort)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusOK {
		return 200, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestStrictPolicyRefusesPrivateMetadataAndLoopback(t *testing.T) {
	sock := open(t, mcpoauth.Policy{})
	fixture := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "fixture") }))
	defer fixture.Close()
	for _, c := range []struct{ dest, want string }{
		{"10.1.2.3:443", "private address"},
		{"192.168.0.10:80", "private address"},
		{"169.254.169.254:80", "cloud metadata address"},
		{"metadata.google.internal:80", "cloud metadata host"},
		{"192.0.2.10:25", "port 25 (web ports only"},
		{"192.0.2.10:22", "port 22"},
		{strings.TrimPrefix(fixture.URL, "http://"), "loopback address"},
		{"localhost:" + fixture.URL[strings.LastIndex(fixture.URL, ":")+1:], "loopback address"},
	} {
		status, body := connect(t, sock, c.dest)
		if status != http.StatusForbidden || !strings.Contains(body, "refused by the platform's outbound address policy") || !strings.Contains(body, c.want) {
			t.Errorf("CONNECT %s: %d %q, want 403 naming %q", c.dest, status, body, c.want)
		}
	}
	resp, err := client(sock).Get("http://169.254.169.254/latest/meta-data/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "cloud metadata address") {
		t.Errorf("plain GET of the metadata address: %d %s", resp.StatusCode, b)
	}
	resp, err = client(sock).Get(fixture.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("plain GET of a loopback fixture under the strict policy: %d", resp.StatusCode)
	}
	if status, body := connect(t, sock, "no-such-host.invalid:443"); status != http.StatusBadGateway || !strings.Contains(body, "DNS: the host name no-such-host.invalid does not resolve") {
		t.Errorf("unresolvable name: %d %q", status, body)
	}
}

func TestLoopbackFixtureThroughOnlyWhenAllowed(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "plain fixture "+r.URL.Path)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "tls fixture") }))
	defer secure.Close()

	allowed := PolicyFromEnv(func(k string) string { return map[string]string{AllowPrivateEnv: "1"}[k] })
	if !allowed.AllowLoopback || !allowed.AllowPrivate || PolicyFromEnv(func(string) string { return "" }).AllowLoopback {
		t.Fatalf("PolicyFromEnv: %+v", allowed)
	}
	sock := open(t, allowed)
	for u, want := range map[string]string{plain.URL + "/page": "plain fixture /page", secure.URL: "tls fixture"} {
		resp, err := client(sock).Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != want {
			t.Errorf("GET %s through the proxy: %d %q", u, resp.StatusCode, b)
		}
	}
	if status, body := connect(t, sock, "169.254.169.254:80"); status != http.StatusForbidden {
		t.Errorf("metadata stays refused when private addresses are allowed: %d %q", status, body)
	}

	strict := open(t, mcpoauth.Policy{})
	if status, _ := connect(t, strict, strings.TrimPrefix(secure.URL, "https://")); status != http.StatusForbidden {
		t.Errorf("the same fixture under the strict policy: %d", status)
	}
}

func TestIdleSocketIsClosedAndOpenedAgain(t *testing.T) {
	p, err := New(Options{Dir: t.TempDir(), Idle: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	if _, err := p.Open("a"); err != nil {
		t.Fatal(err)
	}
	d, _ := p.AgentDir("a")
	sock := filepath.Join(d, "proxy.sock")
	p.closeIdle(time.Now().Add(2 * time.Minute))
	if c, err := net.Dial("unix", sock); err == nil {
		_ = c.Close()
		t.Fatal("an idle agent's socket still answers")
	}
	if _, err := p.Open("a"); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("reopened socket: %v", err)
	}
	_ = c.Close()
}

func TestOnlyDialsTheListedDestinations(t *testing.T) {
	listed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "listed "+r.URL.Path)
	}))
	defer listed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "other") }))
	defer other.Close()
	dir := t.TempDir()
	loose := mcpoauth.Policy{AllowLoopback: true, AllowPrivate: true}
	host := strings.TrimPrefix(listed.URL, "http://")
	git, err := New(Options{Dir: dir, Socket: "git.sock", Policy: loose, Only: []string{strings.ToUpper("LOCALHOST.:" + host[strings.LastIndex(host, ":")+1:]), host}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = git.Close() }()
	browsers, err := New(Options{Dir: dir, Policy: loose})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = browsers.Close() }()
	if got, err := git.Open("agent-1"); err != nil || got != browserproto.ProxyDir+"/git.sock" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := browsers.Open("agent-1"); err != nil {
		t.Fatal(err)
	}
	d, _ := git.AgentDir("agent-1")
	sock := filepath.Join(d, "git.sock")

	resp, err := client(sock).Get(listed.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "listed /x" {
		t.Errorf("GET of the listed destination: %d %q", resp.StatusCode, b)
	}
	if status, body := connect(t, sock, host); status != http.StatusOK {
		t.Errorf("CONNECT to the listed destination: %d %q", status, body)
	}
	if status, _ := connect(t, sock, "localhost"+host[strings.LastIndex(host, ":"):]); status != http.StatusOK {
		t.Errorf("CONNECT to the listed name (listed in capitals with a trailing dot): %d", status)
	}
	for _, dest := range []string{strings.TrimPrefix(other.URL, "http://"), "169.254.169.254:80", "example.com:443"} {
		if status, body := connect(t, sock, dest); status != http.StatusForbidden || !strings.Contains(body, "this proxy reaches only "+strings.ToLower("localhost")) {
			t.Errorf("CONNECT %s through the limited socket: %d %q", dest, status, body)
		}
	}
	resp, err = client(sock).Get(other.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("plain GET of an unlisted destination: %d", resp.StatusCode)
	}
	// The browsers' socket of the same agent keeps the general policy.
	if status, body := connect(t, filepath.Join(d, "proxy.sock"), strings.TrimPrefix(other.URL, "http://")); status != http.StatusOK {
		t.Errorf("the browsers' socket: %d %q", status, body)
	}
}

func TestBadOptionsNameTheField(t *testing.T) {
	for _, o := range []Options{{Only: []string{"github.com"}}, {Only: []string{"github.com:0"}}, {Only: []string{":443"}}, {Socket: "../x.sock"}} {
		o.Dir = t.TempDir()
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), "Only") && !strings.Contains(err.Error(), "Socket") {
			t.Errorf("New(%+v) = %v", o, err)
		}
	}
}
