// Package dexpaprika is the local adapter for DexPaprika's REST API: DEX
// tokens, pools, candles and swaps across networks. The login's key is sent
// as the whole Authorization header (no scheme word); a call the public host
// refuses with 403 is tried once more on the paid host.
package dexpaprika

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/adapters"
)

// ProURL is the host paid plans are served from.
const ProURL = "https://api-pro.dexpaprika.com"

// Adapter implements adapters.Adapter for DexPaprika.
type Adapter struct {
	// ProURL is where a call answered 403 is retried; "" disables the retry.
	ProURL string
	// Now is the clock for default time windows; nil means time.Now.
	Now func() time.Time
}

func init() { adapters.Register(&Adapter{ProURL: ProURL}) }

// Name is the catalog row's config.adapter.
func (*Adapter) Name() string { return "dexpaprika" }

// Check asks /usage which plan the key lands on. The service serves an
// unreadable key as if none were sent, so a "keyless" plan means the key was
// not recognised.
func (a *Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	h, err := authHeader(c)
	if err != nil {
		return "", adapters.ErrRejected
	}
	var u struct {
		Plan string `json:"plan"`
		Tier string `json:"tier"`
	}
	if err := adapters.Rejection(c.GetJSON(ctx, "/usage", nil, h, &u)); err != nil {
		return "", err
	}
	plan := strings.TrimSpace(u.Plan)
	if plan == "" {
		plan = strings.TrimSpace(u.Tier)
	}
	if plan == "" || strings.EqualFold(plan, "keyless") {
		return "", adapters.ErrRejected
	}
	return "plan " + plan, nil
}

// Call runs one of the manifest's tools.
func (a *Adapter) Call(ctx context.Context, c adapters.Conn, tool string, args json.RawMessage) (string, error) {
	run, err := adapters.ToolOf(a.Name(), tools, tool)
	if err != nil {
		return "", err
	}
	if _, err := authHeader(c); err != nil {
		return "", err
	}
	return run(ctx, a, c, args)
}

type toolFunc func(ctx context.Context, a *Adapter, c adapters.Conn, args json.RawMessage) (string, error)

var tools = map[string]toolFunc{
	"search": search,
	"token":  token,
	"prices": prices,
	"pool":   pool,
	"pools":  pools,
	"ohlcv":  ohlcv,
	"swaps":  swaps,
}

func (a *Adapter) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func authHeader(c adapters.Conn) (http.Header, error) {
	key := strings.TrimSpace(c.Cred.AccessToken)
	if key == "" || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, errors.New("the stored DexPaprika key is empty or malformed: connect the login again")
	}
	return http.Header{"Authorization": {key}}, nil
}

// get sends one GET with the key, retrying the paid host on a 403. A 403
// that names a plan limit (an endpoint or a history window the plan lacks)
// is returned as a plain error: the key is fine, so it must not read as a
// refused login.
func (a *Adapter) get(ctx context.Context, c adapters.Conn, path string, q url.Values, out any) error {
	h, err := authHeader(c)
	if err != nil {
		return err
	}
	err = c.GetJSON(ctx, path, q, h, out)
	var first *adapters.HTTPError
	if !errors.As(err, &first) || first.Status != http.StatusForbidden {
		return err
	}
	bodies := []string{first.Body}
	if a.ProURL != "" && strings.TrimRight(a.ProURL, "/") != strings.TrimRight(c.BaseURL, "/") {
		err = c.DoJSON(ctx, http.MethodGet, a.ProURL, path, q, h, nil, out)
		var pro *adapters.HTTPError
		if err == nil || !errors.As(err, &pro) || !pro.Refused() {
			return err
		}
		bodies = append(bodies, pro.Body)
	}
	for _, b := range bodies {
		if msg, ok := planLimit(b); ok {
			return fmt.Errorf("DexPaprika refused this request for the key's plan (HTTP 403): %s", msg)
		}
	}
	return first
}

// planLimit reads a 403 body that refuses a request for the plan rather than
// the key.
func planLimit(body string) (string, bool) {
	var b struct {
		Error        string `json:"error"`
		Message      string `json:"message"`
		RequiredTier string `json:"required_tier"`
	}
	if json.Unmarshal([]byte(body), &b) != nil {
		return "", false
	}
	msg := b.Message
	if msg == "" {
		msg = b.Error
	}
	lower := strings.ToLower(b.Message)
	if b.Error == "plan_required" || b.RequiredTier != "" || strings.Contains(lower, "plan") || strings.Contains(lower, "requires") {
		if b.RequiredTier != "" {
			msg += " (needs the " + b.RequiredTier + " plan)"
		}
		return msg, true
	}
	return "", false
}

// notFound adds what to check to a 400 or 404 of a network-scoped call.
func notFound(err error) error {
	var he *adapters.HTTPError
	if errors.As(err, &he) && (he.Status == http.StatusNotFound || he.Status == http.StatusBadRequest) {
		return fmt.Errorf("%w (check the network id, e.g. ethereum, solana, base, and the address)", err)
	}
	return err
}
