// Package pinnedprices is the Pinned prices adapter: a CoinGecko Pro key plus
// a short list of coins kept on the login. It lists no model tools; the coins
// are quoted at every run start of the agents that use the login and shown to
// the model in its system prompt.
package pinnedprices

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

// Name is the adapter's name in a catalog row's config.adapter, and the
// catalog slug of its server.
const Name = "pinned_prices"

const keyHeader = "x-cg-pro-api-key"

// CoinGecko's error codes (status.error_code) that mean the key itself is
// not a usable Pro key.
const (
	codeKeyMissing   = 10002
	codePlanRestrict = 10005
	codeNotProKey    = 10010
	codeDemoKeyOnPro = 10011
)

// Adapter implements adapters.Adapter.
type Adapter struct{}

func init() { adapters.Register(Adapter{}) }

func (Adapter) Name() string { return Name }

// Check asks /ping with the key; there is no account hint to show.
func (Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	if strings.TrimSpace(c.Cred.AccessToken) == "" {
		return "", adapters.ErrRejected
	}
	err := get(ctx, c, "/ping", nil, nil)
	if keyRefused(err) {
		return "", adapters.ErrRejected
	}
	return "", err
}

// Call: the login has no tools, so no call can name one.
func (Adapter) Call(context.Context, adapters.Conn, string, json.RawMessage) (string, error) {
	return "", errors.New("pinned prices offers no tools")
}

func get(ctx context.Context, c adapters.Conn, path string, query url.Values, out any) error {
	return c.GetJSON(ctx, path, query, http.Header{keyHeader: {c.Cred.AccessToken}}, out)
}

// keyRefused: the answer says the key is not a valid Pro key. A plan that
// lacks an endpoint is a working key.
func keyRefused(err error) bool {
	var he *adapters.HTTPError
	if !errors.As(err, &he) {
		return false
	}
	switch errorCode(he) {
	case codePlanRestrict:
		return false
	case codeKeyMissing, codeNotProKey, codeDemoKeyOnPro:
		return true
	}
	return he.Refused()
}

// errorCode reads status.error_code from an error body, also when CoinGecko
// nests it under "error"; 0 when there is none.
func errorCode(he *adapters.HTTPError) int {
	type status struct {
		Code int `json:"error_code"`
	}
	var body struct {
		Status *status `json:"status"`
		Error  *struct {
			Status *status `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(he.Body), &body) != nil {
		return 0
	}
	switch {
	case body.Status != nil:
		return body.Status.Code
	case body.Error != nil && body.Error.Status != nil:
		return body.Error.Status.Code
	}
	return 0
}
