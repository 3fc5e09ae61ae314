package mcppool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// era is the protocol family a server speaks: the stateless revision
// (2026-07-28 and later: server/discover, protocol metadata on every request)
// or the revisions with the initialize handshake (2025-11-25 and before).
type era uint8

const (
	eraUnknown era = iota
	eraModern
	eraLegacy
)

func (e era) String() string {
	switch e {
	case eraModern:
		return "stateless"
	case eraLegacy:
		return "handshake"
	}
	return "unknown"
}

// eraRecheck is how long a server's era is trusted before the next session
// probes it again: a server upgraded to the stateless revision is noticed
// within it, and a server that stopped speaking it fails its next handshake
// and is probed at once.
const eraRecheck = time.Hour

// eras remembers, per server, the era its last handshake settled on, so a
// handshake-only server is not sent a probe it cannot answer (some take 5 s
// to ignore it on stdio) at every session.
type eras struct {
	mu sync.Mutex
	m  map[string]eraSeen
}

type eraSeen struct {
	era era
	at  time.Time
}

func (e *eras) get(key string) era {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.m[key]
	if !ok || time.Since(s.at) > eraRecheck {
		return eraUnknown
	}
	return s.era
}

func (e *eras) set(key string, v era) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[string]eraSeen{}
	}
	if v == eraUnknown {
		delete(e.m, key)
		return
	}
	e.m[key] = eraSeen{v, time.Now()}
}

// errFakeDiscover: the server answered server/discover with something that is
// not a discover result. Servers that answer every unknown method with an
// empty result do that; the client has by then settled on the stateless wire,
// so the session is dialled again for the handshake.
var errFakeDiscover = errors.New("mcppool: server/discover answered without a discover result")

// handshake starts c and settles the session's era. mcp-go probes with
// server/discover when asked for the stateless revision and falls back to the
// initialize handshake when the probe fails; what it cannot tell is a probe
// "answered" with an empty result, so the first session of a server checks the
// answer again (the versions it lists must include the one in use).
func handshake(ctx context.Context, c *client.Client, known era, watch *probeWatch) (era, error) {
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return eraUnknown, err
	}
	if known == eraLegacy {
		return eraLegacy, initializeAt(ctx, c, mcp.LATEST_LEGACY_PROTOCOL_VERSION, appCapability)
	}
	declared := declarations()
	if err := initializeAt(ctx, c, mcp.LATEST_PROTOCOL_VERSION, declared); err != nil {
		if watch.probeRefused() && !isUnauthorized(err) {
			return eraUnknown, fmt.Errorf("server/discover: %w", transport.ErrUnauthorized)
		}
		return eraUnknown, err
	}
	if !mcp.IsModernProtocol(c.ProtocolVersion()) {
		return eraLegacy, nil
	}
	// The probe declared every extension, so a server that lists them only
	// for a client that declares them still does (declare.go).
	keepAdvertised(declared, c.GetServerCapabilities().Extensions)
	if known == eraModern {
		return eraModern, nil
	}
	d, err := c.Discover(ctx, mcp.DiscoverRequest{})
	if err != nil || !slices.Contains(d.SupportedVersions, c.ProtocolVersion()) {
		return eraLegacy, errFakeDiscover
	}
	return eraModern, nil
}

func initializeAt(ctx context.Context, c *client.Client, version string, extensions map[string]any) error {
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: "guilds", Version: "1"}
	req.Params.Capabilities.Extensions = extensions
	_, err := c.Initialize(ctx, req)
	return err
}

// dialer makes a session's client; an HTTP one hands back the watch on its
// probe (nil otherwise). listen asks an HTTP client of the handshake era for
// the standalone GET stream, on which servers of that era send their own
// requests (an elicitation, for one) and notifications.
type dialer func(listen bool) (*client.Client, *probeWatch, error)

// connect makes a client with dial and settles its era, dialling once more
// for the handshake when the server faked a discover answer, and once more
// with the GET stream when a server first found to need the handshake was
// dialled without it. It returns the era to remember; a failed handshake
// forgets what was known.
func connect(ctx context.Context, dial dialer, known era) (*client.Client, era, error) {
	for {
		listen := known == eraLegacy
		c, watch, err := dial(listen)
		if err != nil {
			return nil, eraUnknown, err
		}
		got, err := handshake(ctx, c, known, watch)
		if err == nil && (got != eraLegacy || listen || !watch.canListen()) {
			return c, got, nil
		}
		_ = c.Close()
		switch {
		case err == nil:
			known = eraLegacy // learnt now: dial again with the GET stream
		case errors.Is(err, errFakeDiscover) && known != eraLegacy:
			known = eraLegacy
		default:
			return nil, eraUnknown, err
		}
	}
}

// probeWatch is the round tripper of an HTTP session's client around its
// server/discover probe. It notes a 401 answer: mcp-go then tries the
// handshake, and a stateless server's answer to that (400, the handshake is
// gone) would hide that the login was refused. And it sends the probe once
// more when the server refuses the very version it lists as supported, which
// a fleet in the middle of a rolling upgrade can do (mcp-go only retries
// with a different version).
type probeWatch struct {
	base    http.RoundTripper
	refused atomic.Bool
	// listens: the session's client would open the GET stream when asked
	// (a pool session; a one-off key check would not).
	listens bool
}

func (w *probeWatch) canListen() bool { return w != nil && w.listens }

func watchProbe(hc *http.Client) (*http.Client, *probeWatch) {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	w := &probeWatch{base: base}
	c := *hc
	c.Transport = w
	return &c, w
}

func (w *probeWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := w.base.RoundTrip(r)
	if err != nil || r.Header.Get("Mcp-Method") != string(mcp.MethodServerDiscover) {
		return res, err
	}
	switch res.StatusCode {
	case http.StatusUnauthorized:
		w.refused.Store(true)
	case http.StatusBadRequest:
		if r.GetBody == nil {
			return res, nil
		}
		body, rerr := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(body))
		if rerr != nil || !refusesItsOwnVersion(body, r.Header.Get("Mcp-Protocol-Version")) {
			return res, nil
		}
		again, gerr := r.GetBody()
		if gerr != nil {
			return res, nil
		}
		retry := r.Clone(r.Context())
		retry.Body = again
		return w.base.RoundTrip(retry)
	}
	return res, nil
}

// refusesItsOwnVersion reports whether body is an unsupported-version error
// whose list of supported versions holds the one that was sent.
func refusesItsOwnVersion(body []byte, sent string) bool {
	var m struct {
		Error *struct {
			Code int `json:"code"`
			Data struct {
				Supported []string `json:"supported"`
			} `json:"data"`
		} `json:"error"`
	}
	return sent != "" && json.Unmarshal(body, &m) == nil && m.Error != nil &&
		m.Error.Code == mcp.UNSUPPORTED_PROTOCOL_VERSION && slices.Contains(m.Error.Data.Supported, sent)
}

func (w *probeWatch) probeRefused() bool { return w != nil && w.refused.Load() }

// defaultsElicitation answers a form with its own defaults, as a person
// pressing OK without changing anything would; a form with a required field
// that has no default is declined (nobody can fill it).
type defaultsElicitation struct{}

func (defaultsElicitation) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	b, _ := json.Marshal(req.Params.RequestedSchema)
	var schema struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(b, &schema) != nil || len(schema.Properties) == 0 {
		return declineElicitation{}.Elicit(ctx, req)
	}
	content := map[string]json.RawMessage{}
	for name, p := range schema.Properties {
		if len(p.Default) > 0 {
			content[name] = p.Default
		}
	}
	for _, name := range schema.Required {
		if _, ok := content[name]; !ok {
			return declineElicitation{}.Elicit(ctx, req)
		}
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}, nil
}

// declineElicitation answers every elicitation: a run has no person at hand
// to fill a form or confirm, and saying so at once lets a server go on (or
// fail with its own message) instead of waiting.
type declineElicitation struct{}

func (declineElicitation) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
}
