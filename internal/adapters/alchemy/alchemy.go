// Package alchemy is the local adapter for Alchemy's NFT API (v3) and, for
// Solana holdings, its DAS JSON-RPC. Alchemy takes the key as a path segment
// rather than a header, so every error that could carry a request URL is
// scrubbed of it before it leaves the package.
package alchemy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

// Name is the catalog's config.adapter for this service.
const Name = "alchemy"

// zeroOwner is the owner the Connect check lists: it holds nothing worth
// paying for, so the answer is small.
const zeroOwner = "0x0000000000000000000000000000000000000000"

func init() { adapters.Register(Adapter{}) }

// Adapter implements adapters.Adapter for Alchemy.
type Adapter struct{}

func (Adapter) Name() string { return Name }

// Check lists the zero address's NFTs on Ethereum. Alchemy gives no harmless
// account detail, so there is no hint.
func (Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	key, err := apiKey(c)
	if err != nil {
		return "", adapters.ErrRejected
	}
	base, err := nftBase(c.BaseURL, ethereum)
	if err != nil {
		return "", err
	}
	var page ownedPage
	q := url.Values{"owner": {zeroOwner}, "pageSize": {"1"}, "withMetadata": {"false"}}
	err = adapters.Rejection(c.DoJSON(ctx, http.MethodGet, base, "/"+key+"/getNFTsForOwner", q, nil, nil, &page))
	if errors.Is(err, adapters.ErrRejected) {
		return "", err
	}
	return "", scrub(err, key)
}

type handler func(ctx context.Context, c adapters.Conn, key string, in args) (string, error)

var tools = map[string]handler{
	"holdings":   holdings,
	"nft":        nft,
	"collection": collection,
}

// args is the union of the tools' arguments (the manifest's schemas).
type args struct {
	Owner    string `json:"owner"`
	Chain    string `json:"chain"`
	Contract string `json:"contract"`
	TokenID  string `json:"token_id"`
	PageKey  string `json:"page_key"`
	Limit    int    `json:"limit"`
}

// Call runs one of the manifest's tools.
func (Adapter) Call(ctx context.Context, c adapters.Conn, tool string, raw json.RawMessage) (string, error) {
	run, in, err := adapters.Dispatch[handler, args](Name, tools, tool, raw)
	if err != nil {
		return "", err
	}
	key, err := apiKey(c)
	if err != nil {
		return "", err
	}
	out, err := run(ctx, c, key, in)
	return out, scrub(err, key)
}

// Alchemy keys are URL-safe tokens; anything else would change the path.
var keyPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{8,128}$`)

func apiKey(c adapters.Conn) (string, error) {
	key := strings.TrimSpace(c.Cred.AccessToken)
	if !keyPattern.MatchString(key) {
		return "", errors.New("the stored Alchemy key is empty or malformed: connect the login again")
	}
	return key, nil
}

// getNFT sends one GET to the NFT API of a chain.
func getNFT(ctx context.Context, c adapters.Conn, key string, ch chain, method string, q url.Values, out any) error {
	base, err := nftBase(c.BaseURL, ch)
	if err != nil {
		return err
	}
	return explain(c.DoJSON(ctx, http.MethodGet, base, "/"+key+"/"+method, q, nil, nil, out), ch)
}

// explain turns Alchemy's "network not enabled for this app" 403 into a plain
// error: the key is good, so it must not read as a refused login.
func explain(err error, ch chain) error {
	var he *adapters.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusForbidden && strings.Contains(strings.ToLower(he.Body), "not enabled") {
		return fmt.Errorf("the Alchemy app of this key does not have %s enabled (HTTP 403): enable the network in the Alchemy dashboard, or ask another chain", ch.name)
	}
	return err
}

// scrub rewrites an error so that its text never holds the key (HTTP client
// errors quote the request URL, which carries it). A service answer stays an
// *adapters.HTTPError so the pool still recognises a refused key.
func scrub(err error, key string) error {
	if err == nil || key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	var he *adapters.HTTPError
	if errors.As(err, &he) {
		return &adapters.HTTPError{Status: he.Status, Body: strings.ReplaceAll(he.Body, key, "[key]")}
	}
	return &scrubbed{msg: strings.ReplaceAll(err.Error(), key, "[key]"), cause: err}
}

// scrubbed answers errors.Is for its cause (a deadline, a cancel) without
// exposing the cause's text through Unwrap.
type scrubbed struct {
	msg   string
	cause error
}

func (e *scrubbed) Error() string        { return e.msg }
func (e *scrubbed) Is(target error) bool { return errors.Is(e.cause, target) }
