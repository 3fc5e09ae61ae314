package alchemy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
)

var base58Address = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{32,44}$`)

// rpc sends one DAS JSON-RPC call to Solana and decodes its result. DAS
// reports bad parameters as a JSON-RPC error inside a 200.
func rpc(ctx context.Context, c adapters.Conn, key, method string, params, out any) error {
	base, err := rpcBase(c.BaseURL, solana)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if err := c.DoJSON(ctx, http.MethodPost, base, "/"+key, nil, h, bytes.NewReader(body), &resp); err != nil {
		return explain(err, solana)
	}
	if resp.Error != nil {
		return fmt.Errorf("%s at Alchemy answered error %d: %s", method, resp.Error.Code, adapters.Clip(resp.Error.Message, 300))
	}
	if len(resp.Result) == 0 || string(resp.Result) == "null" {
		return fmt.Errorf("%s at Alchemy answered no result", method)
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("the service's answer is not the JSON expected: %w", err)
	}
	return nil
}

// solanaHoldings lists an owner's assets a page at a time. DAS pages by
// number, so the page key this tool hands out is the next page's number.
func solanaHoldings(ctx context.Context, c adapters.Conn, key string, in args, n int, pageKey string) (string, error) {
	owner := strings.TrimSpace(in.Owner)
	if !base58Address.MatchString(owner) {
		return "", fmt.Errorf("owner %q is not a Solana address", in.Owner)
	}
	if in.Contract != "" {
		return "", fmt.Errorf("the contract filter covers the EVM chains only")
	}
	page := 1
	if pageKey != "" {
		p, err := strconv.Atoi(pageKey)
		if err != nil || p < 1 {
			return "", fmt.Errorf("page_key %q is not one this tool returned for solana", pageKey)
		}
		page = p
	}
	var res dasPage
	params := map[string]any{"ownerAddress": owner, "page": page, "limit": n}
	if err := rpc(ctx, c, key, "getAssetsByOwner", params, &res); err != nil {
		return "", err
	}
	items := res.Items
	if len(items) > n {
		items = items[:n]
	}
	t := adapters.NewTable("asset", "interface", "name", "symbol", "collection", "compressed")
	for _, a := range items {
		t.Add(a.ID, a.Interface, adapters.Clip(a.Content.Metadata.Name, maxName), a.Content.Metadata.Symbol, a.collection(), a.Compression.Compressed)
	}
	next := ""
	if len(res.Items) >= n {
		next = strconv.Itoa(page + 1)
	}
	return t.String() + footer(nil, next), nil
}

// solanaAsset is nft on Solana: the asset id is the mint, passed as
// contract (token_id is accepted in its place).
func solanaAsset(ctx context.Context, c adapters.Conn, key string, in args) (string, error) {
	id := strings.TrimSpace(in.Contract)
	if !base58Address.MatchString(id) {
		id = strings.TrimSpace(in.TokenID)
	}
	if !base58Address.MatchString(id) {
		return "", fmt.Errorf("on solana, contract must be the asset's mint address (got %q)", in.Contract)
	}
	var a dasAsset
	if err := rpc(ctx, c, key, "getAsset", map[string]any{"id": id}, &a); err != nil {
		return "", err
	}
	t := adapters.NewTable("asset", "interface", "name", "symbol", "collection", "owner", "compressed", "attributes")
	t.Add(a.ID, a.Interface, adapters.Clip(a.Content.Metadata.Name, maxName), a.Content.Metadata.Symbol, a.collection(), a.Ownership.Owner,
		a.Compression.Compressed, attributes(a.Content.Metadata.Attributes))
	return t.String(), nil
}
