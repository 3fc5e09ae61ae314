// Package coingecko is the local adapter for the CoinGecko Pro REST API: a
// login is a Pro API key, sent in the x-cg-pro-api-key header, and every tool
// answers compact TSV.
package coingecko

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

// Name is the adapter's name in a catalog row's config.adapter.
const Name = "coingecko"

const keyHeader = "x-cg-pro-api-key"

// CoinGecko's own error codes, found in the body's status.error_code.
const (
	codeKeyMissing   = 10002
	codePlanRestrict = 10005
	codeNotProKey    = 10010 // a Pro key sent to the public host
	codeDemoKeyOnPro = 10011 // a Demo key sent to the Pro host
)

// Adapter implements adapters.Adapter for CoinGecko Pro.
type Adapter struct{}

func init() { adapters.Register(Adapter{}) }

func (Adapter) Name() string { return Name }

// Check asks /ping with the key. CoinGecko says nothing about the account
// there, so there is no hint.
func (Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	if strings.TrimSpace(c.Cred.AccessToken) == "" {
		return "", adapters.ErrRejected
	}
	var pong struct {
		GeckoSays string `json:"gecko_says"`
	}
	err := get(ctx, c, "/ping", nil, &pong)
	if err == nil {
		return "", nil
	}
	if keyRefused(err) {
		return "", adapters.ErrRejected
	}
	return "", err
}

type toolFunc func(ctx context.Context, c adapters.Conn, args json.RawMessage) (string, error)

var tools = map[string]toolFunc{
	"search":   search,
	"coin":     coin,
	"prices":   prices,
	"new":      newCoins,
	"movers":   movers,
	"supply":   supply,
	"chart":    chart,
	"trending": trending,
}

// Call runs one tool.
func (Adapter) Call(ctx context.Context, c adapters.Conn, tool string, args json.RawMessage) (string, error) {
	fn, err := adapters.ToolOf(Name, tools, tool)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(c.Cred.AccessToken) == "" {
		return "", errors.New("the CoinGecko login has no stored key: connect it again")
	}
	out, err := fn(ctx, c, args)
	if err != nil {
		return "", explain(tool, err)
	}
	return out, nil
}

func get(ctx context.Context, c adapters.Conn, path string, query url.Values, out any) error {
	return c.GetJSON(ctx, path, query, http.Header{keyHeader: {c.Cred.AccessToken}}, out)
}

// decodeArgs reads a tool's arguments; no arguments at all is an empty object.
func decodeArgs(args json.RawMessage, into any) error {
	if len(strings.TrimSpace(string(args))) == 0 || string(args) == "null" {
		return nil
	}
	if err := json.Unmarshal(args, into); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// errorCode is CoinGecko's status.error_code in an error answer's body (some
// answers nest it under "error"), or 0.
func errorCode(he *adapters.HTTPError) (int, string) {
	var body struct {
		Status *struct {
			Code    int    `json:"error_code"`
			Message string `json:"error_message"`
		} `json:"status"`
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal([]byte(he.Body), &body) != nil {
		return 0, ""
	}
	if body.Status == nil && len(body.Error) > 0 && body.Error[0] == '{' {
		var nested struct {
			Status *struct {
				Code    int    `json:"error_code"`
				Message string `json:"error_message"`
			} `json:"status"`
		}
		if json.Unmarshal(body.Error, &nested) == nil {
			body.Status = nested.Status
		}
	}
	if body.Status == nil {
		return 0, ""
	}
	return body.Status.Code, body.Status.Message
}

// keyRefused: the answer says the key is not a valid Pro key. A plan that
// lacks an endpoint is not a refused key.
func keyRefused(err error) bool {
	var he *adapters.HTTPError
	if !errors.As(err, &he) {
		return false
	}
	switch code, _ := errorCode(he); code {
	case codePlanRestrict:
		return false
	case codeKeyMissing, codeNotProKey, codeDemoKeyOnPro:
		return true
	}
	return he.Refused()
}

// explain turns a service error into what the model can act on. A refused
// key comes out as an *adapters.HTTPError with status 401, whichever status
// CoinGecko chose, so the pool tells the operator to connect again.
func explain(tool string, err error) error {
	var he *adapters.HTTPError
	if !errors.As(err, &he) {
		return err
	}
	code, msg := errorCode(he)
	switch {
	case code == codePlanRestrict:
		return fmt.Errorf("the CoinGecko plan of this key does not include %s (it needs the Analyst plan or above): %s", tool, msg)
	case code == codeKeyMissing || code == codeNotProKey || code == codeDemoKeyOnPro:
		return &adapters.HTTPError{Status: http.StatusUnauthorized, Body: he.Body}
	case he.Status == http.StatusNotFound:
		return fmt.Errorf("CoinGecko found nothing for these arguments of %s (check the coin id with search): %w", tool, err)
	case he.Status == http.StatusTooManyRequests:
		return fmt.Errorf("CoinGecko's rate limit for this key is reached; try again in a minute: %w", err)
	}
	return err
}
