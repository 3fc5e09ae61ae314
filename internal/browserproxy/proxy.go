// Package browserproxy is the forward proxy the worker runs for the agents'
// browsers. A browser agent's sandbox has no network: its Chromium talks to
// a relay on the sandbox's loopback, which joins each connection to this
// proxy's unix socket for that agent, bind-mounted into the sandbox at
// browserproto.ProxyDir. The proxy dials on the agent's behalf and applies
// the platform's outbound address policy (mcpoauth.Policy) to every address
// it dials, after resolving the name itself, so DNS cannot steer it:
// loopback, private, link-local and cloud metadata addresses are refused
// unless the operator allows them (GUILDS_BROWSER_ALLOW_PRIVATE). Only web
// ports are dialled: 80, 443 and the unprivileged ones (no mail, no SSH).
// A proxy with Options.Only dials nothing but the destinations it lists:
// the coding agents' way to GitHub (a second socket in the same folder).
package browserproxy

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guilds/guilds/internal/browserproto"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/sandbox"
)

// AllowPrivateEnv lets the agents' browsers reach loopback and private
// addresses of the worker's network ("1" or "true"): development, or a
// deliberate intranet deployment. Metadata and link-local stay refused.
const AllowPrivateEnv = "GUILDS_BROWSER_ALLOW_PRIVATE"

// PolicyFromEnv reads AllowPrivateEnv into the outbound address policy.
func PolicyFromEnv(getenv func(string) string) mcpoauth.Policy {
	return mcpoauth.PolicyFromEnv(func(k string) string {
		if k == mcpoauth.AllowPrivateEnv {
			return getenv(AllowPrivateEnv)
		}
		return ""
	})
}

// DefaultIdle closes an agent's socket unused for this long; the next
// browser call opens it again.
const DefaultIdle = 30 * time.Minute

// dialTimeout bounds resolving and connecting to one destination.
const dialTimeout = 15 * time.Second

// Options configure a Proxy.
type Options struct {
	// Dir holds one folder per agent, each with the agent's socket; it
	// must be on the host of the sandbox engine (it is bind-mounted).
	Dir    string
	Policy mcpoauth.Policy
	// Idle closes an agent's socket unused for this long; 0 = DefaultIdle.
	Idle time.Duration
	// Resolver resolves names; nil = net.DefaultResolver.
	Resolver *net.Resolver
	Logger   *slog.Logger
	// Socket is the socket's file name in each agent's folder; "" = the
	// browsers' (browserproto.ProxySocket). A second proxy over the same Dir
	// with another name gives the agents a second, separately policed way out.
	Socket string
	// Only, when set, are the sole destinations ("host:port", the host a
	// name or an address) any agent's socket dials; everything else is
	// refused before a name is resolved. Each address dialled still passes
	// Policy. nil = any destination Policy allows (the browsers').
	Only []string
	// Serve, when set, answers each agent's socket instead of the plain
	// forward proxy: it gets the agent and this proxy's policed dialer (Only
	// and Policy apply), and decides itself what goes out (the coding
	// agents' GitHub route, which adds the credentials; ADR 0705).
	Serve func(agentID string, dial DialFunc) http.Handler
	// MaxConnsPerAgent bounds the connections one agent holds open at once
	// on its socket (conncap.go); 0 = DefaultMaxConnsPerAgent.
	MaxConnsPerAgent int
}

// DialFunc connects to host:port under the proxy's Only and Policy; its
// refusals carry the text the sandbox is shown.
type DialFunc func(ctx context.Context, hostPort string) (net.Conn, error)

// Proxy serves one unix socket per browser agent.
type Proxy struct {
	opts Options
	log  *slog.Logger

	mu     sync.Mutex
	agents map[string]*agentSocket
	closed bool
	stop   chan struct{}
}

type agentSocket struct {
	ln       net.Listener
	srv      *http.Server
	lastUsed time.Time
	active   int
}

// New returns a proxy; sockets open on the first Open of each agent.
func New(opts Options) (*Proxy, error) {
	if opts.Dir == "" {
		return nil, errors.New("browserproxy: Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("browserproxy: Dir: %w", err)
	}
	opts.Dir = dir
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Socket == "" {
		opts.Socket = filepath.Base(browserproto.ProxySocket)
	}
	if opts.Socket != filepath.Base(opts.Socket) || strings.HasPrefix(opts.Socket, ".") {
		return nil, fmt.Errorf("browserproxy: Socket %q must be a plain file name", opts.Socket)
	}
	only, err := destinations(opts.Only)
	if err != nil {
		return nil, err
	}
	opts.Only = only
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: the sandboxes' user must reach the sockets
		return nil, fmt.Errorf("browserproxy: %w", err)
	}
	p := &Proxy{opts: opts, log: opts.Logger, agents: map[string]*agentSocket{}, stop: make(chan struct{})}
	go p.janitor()
	return p, nil
}

// AgentDir is the host folder bind-mounted at browserproto.ProxyDir in the
// agent's sandbox; it is created when missing. The name is a hash of the
// agent id, which keeps the socket's path within the unix limit.
func (p *Proxy) AgentDir(agentID string) (string, error) {
	sum := sha256.Sum256([]byte(agentID))
	d := filepath.Join(p.opts.Dir, hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(d, 0o755); err != nil { //nolint:gosec // G301: the sandboxes' user must reach the socket
		return "", fmt.Errorf("browserproxy: %w", err)
	}
	if err := os.Chmod(d, 0o755); err != nil { //nolint:gosec // G302: as above
		return "", fmt.Errorf("browserproxy: %w", err)
	}
	return d, nil
}

// Binds are the mounts an agent's sandbox gets: its proxy folder, read-only
// (a socket on a read-only mount still connects).
func (p *Proxy) Binds(agentID string) ([]sandbox.Bind, error) {
	d, err := p.AgentDir(agentID)
	if err != nil {
		return nil, err
	}
	return []sandbox.Bind{{Source: d, Target: browserproto.ProxyDir, ReadOnly: true}}, nil
}

// Open makes sure the agent's socket listens and returns its path inside
// the sandbox.
func (p *Proxy) Open(agentID string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return "", errors.New("browserproxy: closed")
	}
	if a := p.agents[agentID]; a != nil {
		a.lastUsed = time.Now()
		return p.sandboxPath(), nil
	}
	d, err := p.AgentDir(agentID)
	if err != nil {
		return "", err
	}
	path := filepath.Join(d, p.opts.Socket)
	_ = os.Remove(path) // a socket left by an earlier worker
	ln, err := net.Listen("unix", path)
	if err != nil {
		return "", fmt.Errorf("browserproxy: listen on %s: %w", path, err)
	}
	// The sandbox's user (not this process's) connects to it.
	if err := os.Chmod(path, 0o666); err != nil { //nolint:gosec // G302: a socket for the sandbox's user
		_ = ln.Close()
		return "", fmt.Errorf("browserproxy: %w", err)
	}
	ln = limitConns(ln, p.opts.MaxConnsPerAgent)
	a := &agentSocket{ln: ln, lastUsed: time.Now()}
	h := p.handler(agentID, a)
	if p.opts.Serve != nil {
		h = p.served(a, p.opts.Serve(agentID, p.dial))
	}
	a.srv = &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	p.agents[agentID] = a
	go func() { _ = a.srv.Serve(ln) }()
	p.log.Info("agent proxy opened", "agent", agentID, "socket", p.opts.Socket, "limited", len(p.opts.Only) > 0)
	return p.sandboxPath(), nil
}

// sandboxPath is the agent's socket as its sandbox sees it.
func (p *Proxy) sandboxPath() string { return browserproto.ProxyDir + "/" + p.opts.Socket }

// Close stops every socket.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	close(p.stop)
	for id, a := range p.agents {
		_ = a.srv.Close()
		_ = a.ln.Close() // Serve may not have taken it yet
		delete(p.agents, id)
	}
	return nil
}

func (p *Proxy) janitor() {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.closeIdle(time.Now())
		}
	}
}

func (p *Proxy) closeIdle(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, a := range p.agents {
		if a.active == 0 && now.Sub(a.lastUsed) > p.opts.Idle {
			_ = a.srv.Close()
			_ = a.ln.Close()
			delete(p.agents, id)
			p.log.Info("browser proxy closed for an idle agent", "agent", id)
		}
	}
}

func (p *Proxy) touch(a *agentSocket, delta int) {
	p.mu.Lock()
	a.active += delta
	a.lastUsed = time.Now()
	p.mu.Unlock()
}

// refusal is a destination the policy refuses or that cannot be reached;
// its text is what the browser (and the helper's probe) shows.
type refusal struct {
	status int
	text   string
}

func (r *refusal) Error() string { return r.text }

// dial resolves host and connects to the first address the policy allows.
func (p *Proxy) dial(ctx context.Context, hostPort string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil, &refusal{http.StatusBadRequest, fmt.Sprintf("%q is not host:port", hostPort)}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || n < 1024 && n != 80 && n != 443 {
		return nil, &refusal{http.StatusForbidden, fmt.Sprintf("refused by the platform's outbound address policy: port %s (web ports only: 80, 443 and 1024 and up)", port)}
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if len(p.opts.Only) > 0 && !slices.Contains(p.opts.Only, net.JoinHostPort(lower, port)) {
		return nil, &refusal{http.StatusForbidden, fmt.Sprintf("refused: this proxy reaches only %s, not %s",
			strings.Join(p.opts.Only, ", "), net.JoinHostPort(host, port))}
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if lower == "metadata" || lower == "metadata.google.internal" {
		return nil, &refusal{http.StatusForbidden, fmt.Sprintf("refused by the platform's outbound address policy: %s is a cloud metadata host", host)}
	}
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		addrs, err := p.opts.Resolver.LookupIPAddr(ctx, host)
		if err != nil || len(addrs) == 0 {
			return nil, &refusal{http.StatusBadGateway, fmt.Sprintf("DNS: the host name %s does not resolve", host)}
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	var why []string
	var d net.Dialer
	var lastErr error
	for _, ip := range ips {
		if _, err := p.opts.Policy.Check("https://" + net.JoinHostPort(ip.String(), port) + "/"); err != nil {
			why = append(why, strings.TrimPrefix(err.Error(), mcpoauth.ErrBlockedEndpoint.Error()+": "))
			continue
		}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	if lastErr == nil {
		return nil, &refusal{http.StatusForbidden, fmt.Sprintf("refused by the platform's outbound address policy: %s (%s)", host, strings.Join(why, "; "))}
	}
	var op *net.OpError
	msg := lastErr.Error()
	if errors.As(lastErr, &op) && op.Err != nil {
		msg = op.Err.Error()
	}
	if errors.Is(lastErr, context.DeadlineExceeded) {
		msg = "timed out"
	}
	return nil, &refusal{http.StatusBadGateway, fmt.Sprintf("could not connect to %s: %s", hostPort, msg)}
}

func (p *Proxy) handler(agentID string, a *agentSocket) http.Handler {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           func(ctx context.Context, _, addr string) (net.Conn, error) { return p.dial(ctx, addr) },
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.touch(a, 1)
		defer p.touch(a, -1)
		if r.Method == http.MethodConnect {
			p.tunnel(w, r, agentID)
			return
		}
		p.forward(w, r, tr)
	})
}

// served keeps an agent's socket open while Options.Serve's handler works.
func (p *Proxy) served(a *agentSocket, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.touch(a, 1)
		defer p.touch(a, -1)
		h.ServeHTTP(w, r)
	})
}

// tunnel serves CONNECT: the destination is dialled under the policy, then
// bytes flow both ways (TLS, or a websocket, end to end).
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request, agentID string) {
	up, err := p.dial(r.Context(), r.Host)
	if err != nil {
		refuse(w, err)
		p.log.Info("browser proxy refused a tunnel", "agent", agentID, "host", r.Host, "why", err.Error())
		return
	}
	defer func() { _ = up.Close() }()
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "tunnels are not supported here", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer func() { _ = down.Close() }()
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, bufReader(buf, down)); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(down, up); closeWrite(down); done <- struct{}{} }()
	<-done
	<-done
}

func bufReader(buf *bufio.ReadWriter, conn net.Conn) io.Reader {
	if buf != nil && buf.Reader.Buffered() > 0 {
		return io.MultiReader(io.LimitReader(buf.Reader, int64(buf.Reader.Buffered())), conn)
	}
	return conn
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// forward serves a plain http request in absolute form. Redirects go back
// to the browser, which asks again (through the policy).
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, tr *http.Transport) {
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "this proxy serves absolute http:// requests and CONNECT only", http.StatusBadRequest)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"} {
		out.Header.Del(h)
	}
	if r.URL.Port() == "" {
		out.URL.Host = net.JoinHostPort(r.URL.Hostname(), "80")
	}
	resp, err := tr.RoundTrip(out)
	if err != nil {
		var rf *refusal
		if errors.As(err, &rf) {
			refuse(w, rf)
			return
		}
		refuse(w, &refusal{http.StatusBadGateway, fmt.Sprintf("could not reach %s: %v", r.URL.Host, err)})
		return
	}
	defer func() { _ = resp.Body.Close() }()
	for k, vs := range resp.Header {
		if k == "Connection" || k == "Keep-Alive" {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func refuse(w http.ResponseWriter, err error) {
	status, text := http.StatusBadGateway, err.Error()
	var rf *refusal
	if errors.As(err, &rf) {
		status = rf.status
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text+"\n") //nolint:gosec // G705: a text/plain answer
}

// destinations checks and normalises Options.Only: host:port, lower case,
// no trailing dot, a port in range.
func destinations(in []string) ([]string, error) {
	var out []string
	for _, d := range in {
		host, port, err := net.SplitHostPort(strings.TrimSpace(d))
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("browserproxy: Only: %q is not host:port", d)
		}
		out = append(out, net.JoinHostPort(strings.ToLower(strings.TrimSuffix(host, ".")), port))
	}
	return out, nil
}
