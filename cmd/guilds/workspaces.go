package main

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/guilds/guilds/internal/browserproto"
	"github.com/guilds/guilds/internal/browserproxy"
	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox"
)

// workspaceSlot is the agents' workspace as the code tools see it. Every
// process declares the tools (offers and the Tools view list them); only the
// worker fills the slot with its workspaces.Manager, so a call anywhere else
// fails with sandbox.ErrNoWorkspace.
type workspaceSlot struct {
	mu     sync.RWMutex
	m      *workspaces.Manager
	helper string // the host's guilds-code, for the local driver
	// proxy is the browsers' way out of sandboxes without a network
	// (docker driver); nil = none, and Chromium connects directly.
	proxy *browserproxy.Proxy
	// gitProxy is the coding agents' way to GitHub only (a second socket
	// in the same folder, ADR 1201); nil = none (local driver, no App).
	gitProxy *browserproxy.Proxy
}

// gitSocket is the GitHub proxy's socket in each agent's folder.
const gitSocket = "git.sock"

// OpenGitHub gives a coding generation the agent's socket to GitHub ("" =
// no proxy: the sandbox has the host's network).
func (s *workspaceSlot) OpenGitHub(agentID string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.gitProxy == nil {
		return "", nil
	}
	return s.gitProxy.Open(agentID)
}

// Open gives the browser tools the agent's proxy socket ("" = no proxy).
func (s *workspaceSlot) Open(agentID string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.proxy == nil {
		return "", nil
	}
	return s.proxy.Open(agentID)
}

// BrowserUser is the uid Chromium runs as: the browser's own in container
// sandboxes (those have the proxy), the agent's on the local driver ("").
func (s *workspaceSlot) BrowserUser() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.proxy == nil {
		return ""
	}
	return sandbox.BrowserUser
}

var (
	_ sandbox.Workspace  = (*workspaceSlot)(nil)
	_ code.HelperLocator = (*workspaceSlot)(nil)
)

func (s *workspaceSlot) manager() (*workspaces.Manager, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.m == nil {
		return nil, sandbox.ErrNoWorkspace
	}
	return s.m, nil
}

func (s *workspaceSlot) Exec(ctx context.Context, agentID string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	m, err := s.manager()
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	return m.Exec(ctx, agentID, req)
}

func (s *workspaceSlot) CopyTo(ctx context.Context, agentID, path string, content []byte, mode fs.FileMode) error {
	m, err := s.manager()
	if err != nil {
		return err
	}
	return m.CopyTo(ctx, agentID, path, content, mode)
}

func (s *workspaceSlot) CodeHelper() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.helper
}

// codeOptions wires the native registry's code tools to the platform's
// workspace slot (CODE_RESULT_MAX_BYTES caps their results).
func (p *platform) codeOptions() []native.Option {
	if p.workspace == nil {
		p.workspace = &workspaceSlot{}
	}
	opts := []native.Option{native.WithWorkspace(p.workspace), native.WithBrowserProxy(p.workspace),
		native.WithBrowserUser(p.workspace.BrowserUser)}
	if n, err := strconv.Atoi(p.env.Getenv("CODE_RESULT_MAX_BYTES")); err == nil && n > 0 {
		opts = append(opts, native.WithCodeResultMax(n))
	} else if v := p.env.Getenv("CODE_RESULT_MAX_BYTES"); v != "" {
		p.log.Warn("CODE_RESULT_MAX_BYTES must be a positive number of bytes; the default applies", "value", v)
	}
	return opts
}

// workspaceStopTimeout bounds stopping the sandboxes when the worker stops.
const workspaceStopTimeout = time.Minute

// startWorkspaces gives the worker its agents' workspaces: the manager the
// configuration asks for (GUILDS_SANDBOX_*), with the sandboxes an earlier
// worker left behind removed. An engine that does not answer is logged, not
// fatal: runs without coding need none, and a code tool call then names the
// failure. The returned function stops every sandbox (home volumes stay).
func (p *platform) startWorkspaces(ctx context.Context) (func(), error) {
	m, err := workspaces.FromConfig(p.cfg, p.log)
	if err != nil {
		return nil, err
	}
	m.SetOrgOf(func(ctx context.Context, agentID string) (string, error) {
		a, err := orgs.LoadAgent(ctx, p.db, agentID)
		return a.OrganisationID, err
	})
	if removed, err := m.CleanupOrphans(ctx); err != nil {
		p.log.Error("agent workspaces: the sandbox engine did not answer at start; code tools fail until it does "+
			"(set DOCKER_HOST, or for development only GUILDS_SANDBOX_DRIVER=local with GUILDS_SANDBOX_ALLOW_LOCAL=1)",
			"driver", p.cfg.Sandbox.Driver, "err", err)
	} else {
		p.log.Info("agent workspaces ready", "driver", p.cfg.Sandbox.Driver, "orphans_removed", len(removed))
	}
	if p.workspace == nil {
		p.workspace = &workspaceSlot{}
	}
	// The agents' browsers reach the web only through the worker's proxy,
	// whose socket folder every docker sandbox mounts (ADR 0704).
	var proxy, gitProxy *browserproxy.Proxy
	if p.cfg.Sandbox.Driver != config.SandboxLocal {
		proxy, err = browserproxy.New(browserproxy.Options{Dir: filepath.Join(p.cfg.DataDir, "browser-proxy"),
			Policy: browserproxy.PolicyFromEnv(p.env.Getenv), Logger: p.log,
			MaxConnsPerAgent: p.cfg.Limits.MaxProxyConnsPerAgent})
		if err != nil {
			return nil, err
		}
		m.SetBinds(proxy.Binds)
		if err := m.StartPool(ctx, p.cfg.Sandbox.Pool, browserproto.ProxyDir); err != nil {
			p.log.Warn("agent workspaces: no sandbox pool; each agent's first call creates its sandbox", "pool", p.cfg.Sandbox.Pool, "err", err)
		}
		if gitProxy, err = p.startGitProxy(); err != nil {
			_ = proxy.Close()
			return nil, err
		}
	}
	p.workspace.mu.Lock()
	p.workspace.m, p.workspace.proxy, p.workspace.gitProxy = m, proxy, gitProxy
	if p.cfg.Sandbox.Driver == config.SandboxLocal {
		p.workspace.helper = hostHelper()
	}
	p.workspace.mu.Unlock()
	fctx, stopFollowing := context.WithCancel(ctx)
	p.followWorkspaceStops(fctx, m)
	return func() {
		stopFollowing()
		p.workspace.mu.Lock()
		p.workspace.m, p.workspace.proxy, p.workspace.gitProxy = nil, nil, nil
		p.workspace.mu.Unlock()
		for _, px := range []*browserproxy.Proxy{proxy, gitProxy} {
			if px != nil {
				_ = px.Close()
			}
		}
		sctx, cancel := context.WithTimeout(context.Background(), workspaceStopTimeout)
		defer cancel()
		if err := m.Close(sctx); err != nil && !errors.Is(err, context.Canceled) {
			p.log.Warn("agent workspaces: stopping the sandboxes", "err", err)
		}
	}, nil
}

// startGitProxy is the coding agents' proxy to GitHub when the box has the
// App: the route of githubapp.Generations, which adds the installation token
// to git and API requests of the selected repositories; it dials only the
// App's hosts (githubapp.EgressHosts), and private addresses only when the
// operator named those hosts; nil without the App.
func (p *platform) startGitProxy() (*browserproxy.Proxy, error) {
	if !p.integrations.On(githubapp.Integration) {
		return nil, nil
	}
	hosts, private, err := githubapp.EgressFromRegistry(p.integrations)
	if err != nil {
		return nil, err
	}
	g := p.gitHubGenerations()
	return browserproxy.New(browserproxy.Options{Dir: filepath.Join(p.cfg.DataDir, "browser-proxy"), Socket: gitSocket, Only: hosts,
		Policy: mcpoauth.Policy{AllowLoopback: private, AllowPrivate: private}, Logger: p.log,
		// The route adds the installation token itself (ADR 0705).
		Serve:            func(agentID string, dial browserproxy.DialFunc) http.Handler { return g.EgressHandler(agentID, dial) },
		MaxConnsPerAgent: p.cfg.Limits.MaxProxyConnsPerAgent})
}

// hostHelper finds guilds-code for the local driver, whose commands run on
// this host: beside this binary, else on PATH; "" leaves the image's path,
// and a call then says the helper cannot run.
func hostHelper() string {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "guilds-code")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath("guilds-code"); err == nil {
		return p
	}
	return ""
}
