package githubapp

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The coding agents' route to GitHub out of a sandbox without a network
// (ADR 0705). The sandbox sends plain http requests, without a credential,
// to the worker's proxy socket; the route drops whatever credential came
// with them, checks that the request is git's smart HTTP or the REST API of
// one of the repositories the generation's token was issued for, and sends
// it to GitHub over the App's URLs with the installation token, which never
// enters the sandbox.

// egressGrant is what the route holds for one agent.
type egressGrant struct {
	// tokens: each repository's token (owner/name, lower case). A login
	// whose user can push to some repositories and only read others has a
	// write token and a read one.
	tokens  map[string]string
	expires time.Time // the earliest of the tokens'
	repos   []string  // owner/name, lower case
	web     *url.URL
	api     *url.URL
}

// gitServices are the smart HTTP endpoints under <owner>/<repo>.git/.
var gitServices = map[string]string{
	"info/refs":        http.MethodGet,
	"git-upload-pack":  http.MethodPost,
	"git-receive-pack": http.MethodPost,
}

// dropped are the request headers that never reach GitHub: any credential
// the sandbox sent, and the hop-by-hop ones.
var dropped = []string{"Authorization", "Proxy-Authorization", "Cookie", "Proxy-Connection", "Connection",
	"Keep-Alive", "Te", "Trailer", "Upgrade"}

func (g *Generations) setGrant(agentID string, gr egressGrant) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.grants == nil {
		g.grants = map[string]egressGrant{}
	}
	g.grants[agentID] = gr
}

func (g *Generations) dropGrant(agentID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.grants, agentID)
}

// liveGrant is the agent's grant when its token has not expired.
func (g *Generations) liveGrant(agentID string) (egressGrant, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr, ok := g.grants[agentID]
	return gr, ok && time.Now().Before(gr.expires)
}

// EgressHandler answers one agent's GitHub socket of the worker's proxy;
// dial is the proxy's policed dialer (only the App's hosts).
func (g *Generations) EgressHandler(agentID string, dial func(ctx context.Context, hostPort string) (net.Conn, error)) http.Handler {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           func(ctx context.Context, _, addr string) (net.Conn, error) { return dial(ctx, addr) },
		MaxIdleConns:          8,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute, // a large fetch's pack takes a while to start
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gr, ok := g.liveGrant(agentID)
		if !ok {
			egressRefuse(w, http.StatusForbidden, "refused: this agent holds no GitHub access now (its guild turned GitHub egress off, "+
				"it has no repositories selected, or its run ended; a shell call of a running generation gets a fresh token)")
			return
		}
		if r.Method == http.MethodConnect {
			egressRefuse(w, http.StatusForbidden, fmt.Sprintf("refused: GitHub is reached over plain http through this proxy, which adds the "+
				"credentials itself (http://%s/<owner>/<repo>.git, http://%s%s/repos/<owner>/<repo>/...); tunnels are not served",
				gr.web.Host, gr.api.Host, gr.api.Path))
			return
		}
		target, api, name, why := egressTarget(gr, r)
		if why != "" {
			egressRefuse(w, http.StatusForbidden, why)
			g.log().Info("github egress refused a request", "agent", agentID, "method", r.Method, "host", r.URL.Host, "path", r.URL.Path)
			return
		}
		g.forward(w, r, tr, gr.tokens[name], target, api)
	})
}

// forward sends the request on with the installation token in place of
// whatever credential it had.
func (g *Generations) forward(w http.ResponseWriter, r *http.Request, tr *http.Transport, token string, target *url.URL, api bool) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target.String(), r.Body) //nolint:gosec // G704: target is built by egressTarget from the App's URLs and the grant's repositories only
	if err != nil {
		egressRefuse(w, http.StatusBadRequest, "refused: "+err.Error())
		return
	}
	out.ContentLength = r.ContentLength
	for k, vs := range r.Header {
		if !slices.ContainsFunc(dropped, func(d string) bool { return strings.EqualFold(d, k) }) {
			out.Header[k] = vs
		}
	}
	if api {
		out.Header.Set("Authorization", "token "+token)
	} else {
		out.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(gitUsername+":"+token)))
	}
	resp, err := tr.RoundTrip(out)
	if err != nil {
		egressRefuse(w, http.StatusBadGateway, fmt.Sprintf("could not reach GitHub at %s: %s", target.Host, strings.ReplaceAll(err.Error(), token, "[redacted]")))
		return
	}
	defer func() { _ = resp.Body.Close() }()
	for k, vs := range resp.Header {
		if k == "Connection" || k == "Keep-Alive" || k == "Set-Cookie" {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(flushWriter{w}, resp.Body)
}

// gitUsername is what git sends with an installation token.
const gitUsername = "x-access-token"

// egressTarget maps a request of the sandbox onto GitHub: the API under
// /repos/<owner>/<repo>/ or git's smart HTTP of <owner>/<repo>, each only
// for a repository of the grant, named (owner/name, lower case) so that its
// token is the one added. why says what was refused ("" = allowed).
func egressTarget(gr egressGrant, r *http.Request) (target *url.URL, api bool, name, why string) {
	u := r.URL
	if u.Scheme != "http" || u.Host == "" {
		return nil, false, "", "refused: this proxy takes absolute http:// requests to GitHub only"
	}
	allowed := strings.Join(gr.repos, ", ")
	if sameHost(u, gr.api) {
		if rest, ok := strings.CutPrefix(u.Path, strings.TrimRight(gr.api.Path, "/")+"/repos/"); ok {
			owner, rest, _ := strings.Cut(rest, "/")
			name, tail, _ := strings.Cut(rest, "/")
			if slices.ContainsFunc(strings.Split(tail, "/"), func(seg string) bool { return seg == "." || seg == ".." }) {
				return nil, false, "", "refused: a path with . or .. segments"
			}
			if !slices.Contains(gr.repos, strings.ToLower(owner+"/"+name)) {
				return nil, false, "", fmt.Sprintf("refused: the GitHub API is open to this agent only under /repos/ of %s, not %s/%s", allowed, owner, name)
			}
			t := *gr.api
			t.Path = strings.TrimRight(gr.api.Path, "/") + "/repos/" + owner + "/" + name
			if tail != "" {
				t.Path += "/" + tail
			}
			t.RawPath, t.RawQuery = "", u.RawQuery
			return &t, true, strings.ToLower(owner + "/" + name), ""
		}
	}
	if sameHost(u, gr.web) {
		if rest, ok := strings.CutPrefix(u.Path, strings.TrimRight(gr.web.Path, "/")+"/"); ok {
			owner, rest, _ := strings.Cut(rest, "/")
			name, service, _ := strings.Cut(rest, "/")
			name = strings.TrimSuffix(name, ".git")
			method, isGit := gitServices[service]
			switch {
			case !isGit || r.Method != method:
				return nil, false, "", fmt.Sprintf("refused: on %s this proxy serves git only (info/refs, git-upload-pack, git-receive-pack), not %s %s",
					gr.web.Host, r.Method, u.Path)
			case service == "info/refs" && !slices.Contains([]string{"git-upload-pack", "git-receive-pack"}, u.Query().Get("service")):
				return nil, false, "", "refused: info/refs is served for git-upload-pack and git-receive-pack only"
			case !slices.Contains(gr.repos, strings.ToLower(owner+"/"+name)):
				return nil, false, "", fmt.Sprintf("refused: git reaches only this agent's repositories (%s), not %s/%s", allowed, owner, name)
			}
			t := *gr.web
			t.Path = strings.TrimRight(gr.web.Path, "/") + "/" + owner + "/" + name + ".git/" + service
			t.RawPath, t.RawQuery = "", u.RawQuery
			return &t, false, strings.ToLower(owner + "/" + name), ""
		}
	}
	return nil, false, "", fmt.Sprintf("refused: this proxy reaches only GitHub (%s, %s), not %s", gr.web.Host, gr.api.Host, u.Host)
}

// sameHost: the request names the configured host; its port, when it names
// one, is the configured one or plain http's.
func sameHost(u, conf *url.URL) bool {
	if !strings.EqualFold(u.Hostname(), conf.Hostname()) {
		return false
	}
	p := u.Port()
	return p == "" || p == "80" || p == conf.Port()
}

func egressRefuse(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text+"\n") //nolint:gosec // G705: a text/plain answer
}

// flushWriter sends each chunk on at once (git's progress and side band).
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}
