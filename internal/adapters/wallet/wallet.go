// Package wallet is the local adapter that holds an EVM and a Solana key and
// signs with them: addresses, balances, transfers, contract calls, prebuilt
// Solana transactions, swaps (Jupiter, LiFi, Uniswap's Trading API) and
// OpenSea orders. Its login is five fields (the catalog row's key_fields):
// the two private keys, an Alchemy key for the chains' JSON-RPC, an OpenSea
// key and an optional Uniswap key. Signing uses go-ethereum (EIP-1559 and
// EIP-155) and solana-go; no key ever leaves the adapter, and every stored
// value is in the login's redaction set. See docs/adr/1301-wallet.md.
package wallet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/connectors"
)

// Name is the catalog's config.adapter for the Wallet.
const Name = "wallet"

func init() { adapters.Register(&Adapter{}) }

// Adapter implements adapters.Adapter for the Wallet.
type Adapter struct{}

func (*Adapter) Name() string { return Name }

// Lists: uniswap_swap is offered only to a login holding a Uniswap key.
func (*Adapter) Lists(cred connectors.Credential, tool string) bool {
	return tool != "uniswap_swap" || cred.Extra[FieldUniswap] != ""
}

// Check proves every key before it is stored: both private keys parse,
// Alchemy answers eth_blockNumber on eth-mainnet and getSlot on Solana,
// OpenSea lists its chains with the OpenSea key, and Uniswap its supported
// chains with the Uniswap key when there is one. A refusal names its key.
// The hint is the two addresses, cut short.
func (*Adapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	k, err := parseKeys(c.Cred)
	if err != nil {
		return "", err
	}
	ep, err := endpointsOf(c.BaseURL)
	if err != nil {
		return "", err
	}
	primary, _ := ep.rpc(evmChains["ethereum"], k.alchemy)
	e := &evm{ch: evmChains["ethereum"], rpc: newRPC(c, primary, ""), keys: k}
	if _, err := e.blockNumber(ctx); err != nil {
		return "", refusedAs(FieldAlchemy, "Alchemy refused it for eth_blockNumber on eth-mainnet", err)
	}
	if _, err := newSol(c, ep, k).slot(ctx); err != nil {
		return "", refusedAs(FieldAlchemy, "Alchemy refused it for getSlot on solana-mainnet", err)
	}
	var chains json.RawMessage
	if err := c.DoJSON(ctx, http.MethodGet, ep.service("opensea", openseaURL), "/chains", nil, openseaHeader(k), nil, &chains); err != nil {
		return "", refusedAs(FieldOpenSea, "OpenSea refused it for its chain list", err)
	}
	if k.uniswap != "" {
		if err := c.DoJSON(ctx, http.MethodGet, ep.service("uniswap", uniswapURL), "/supported_chains", nil, uniswapHeader(k), nil, &chains); err != nil {
			return "", refusedAs(FieldUniswap, "Uniswap refused it for its supported-chain list", err)
		}
	}
	return short(k.evmAddr.Hex()) + " · " + short(k.solAddr.String()), nil
}

// refusedAs names the field a service refused (401 or 403); any other
// failure is returned as it is (the service could not be asked).
func refusedAs(field, reason string, err error) error {
	if adapters.Rejected(err) {
		return &KeyError{Field: field, Reason: reason}
	}
	return err
}

func openseaHeader(k *keys) http.Header { return http.Header{"X-API-KEY": {k.opensea}} }
func uniswapHeader(k *keys) http.Header { return http.Header{"x-api-key": {k.uniswap}} }

// call is one tool call: the connection, its endpoints and its keys.
type call struct {
	conn adapters.Conn
	ep   endpoints
	keys *keys
}

func (c *call) evm(ch chain) *evm {
	primary, fallback := c.ep.rpc(ch, c.keys.alchemy)
	return &evm{ch: ch, rpc: newRPC(c.conn, primary, fallback), keys: c.keys}
}

func (c *call) sol() *sol { return newSol(c.conn, c.ep, c.keys) }

type handler func(ctx context.Context, c *call, in args) (string, error)

// args are every tool's arguments (each tool reads its own).
type args struct {
	Chain       string `json:"chain"`
	To          string `json:"to"`
	Amount      string `json:"amount"`
	Token       string `json:"token"`
	Data        string `json:"data"`
	Value       string `json:"value"`
	Transaction string `json:"transaction"`
	FromToken   string `json:"from_token"`
	ToToken     string `json:"to_token"`
	Slippage    string `json:"slippage"`
	Collection  string `json:"collection"`
	Contract    string `json:"contract"`
	TokenID     string `json:"token_id"`
	Price       string `json:"price"`
	OrderHash   string `json:"order_hash"`
}

var tools = map[string]handler{
	"get_address":              getAddress,
	"get_balance":              getBalance,
	"send":                     send,
	"call":                     callContract,
	"submit":                   submit,
	"swap":                     swap,
	"uniswap_swap":             uniswapSwap,
	"opensea_buy":              openseaBuy,
	"opensea_list":             openseaList,
	"opensea_accept_offer":     openseaAcceptOffer,
	"opensea_collection_offer": openseaCollectionOffer,
	"opensea_cancel_order":     openseaCancelOrder,
}

// Call runs one of the manifest's tools with the stored keys.
func (*Adapter) Call(ctx context.Context, c adapters.Conn, tool string, raw json.RawMessage) (string, error) {
	h, in, err := adapters.Dispatch[handler, args](Name, tools, tool, raw)
	if err != nil {
		return "", err
	}
	k, err := parseKeys(c.Cred)
	var ke *KeyError
	if errors.As(err, &ke) {
		return "", fmt.Errorf("the stored Wallet login has a malformed %s: connect the login again", ke.Field)
	}
	if err != nil {
		return "", err
	}
	ep, err := endpointsOf(c.BaseURL)
	if err != nil {
		return "", err
	}
	out, err := h(ctx, &call{conn: c, ep: ep, keys: k}, in)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	return out, nil
}
