package alchemy

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// chain is a network the tools accept and the label of its Alchemy host.
type chain struct {
	name  string // the name models pass and answers print
	label string // first label of the host: eth-mainnet, polygon-mainnet, …
}

var (
	ethereum = chain{"ethereum", "eth-mainnet"}
	solana   = chain{"solana", "solana-mainnet"}
)

var chains = map[string]chain{
	"ethereum":  ethereum,
	"polygon":   {"polygon", "polygon-mainnet"},
	"base":      {"base", "base-mainnet"},
	"arbitrum":  {"arbitrum", "arb-mainnet"},
	"bsc":       {"bsc", "bnb-mainnet"},
	"optimism":  {"optimism", "opt-mainnet"},
	"ink":       {"ink", "ink-mainnet"},
	"robinhood": {"robinhood", "robinhood-mainnet"},
	"solana":    solana,
}

var chainAliases = map[string]string{
	"": "ethereum", "eth": "ethereum", "mainnet": "ethereum", "matic": "polygon", "arb": "arbitrum",
	"bnb": "bsc", "binance": "bsc", "op": "optimism", "sol": "solana",
}

func chainOf(raw string) (chain, error) {
	n := strings.ToLower(strings.TrimSpace(raw))
	if alias, ok := chainAliases[n]; ok {
		n = alias
	}
	if ch, ok := chains[n]; ok {
		return ch, nil
	}
	names := make([]string, 0, len(chains))
	for k := range chains {
		names = append(names, k)
	}
	sort.Strings(names)
	return chain{}, fmt.Errorf("unknown chain %q: use one of %s", raw, strings.Join(names, ", "))
}

// The catalog row names the Ethereum NFT host. Another chain's host is the
// same URL with the chain's label in place of eth-mainnet; a row pointing
// anywhere else (a proxy, a test server) serves every chain itself.
const hostLabel = "eth-mainnet"

func nftBase(catalogURL string, ch chain) (string, error) {
	u, err := url.Parse(strings.TrimRight(catalogURL, "/"))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the catalog URL of Alchemy is not a URL")
	}
	if rest, ok := strings.CutPrefix(u.Host, hostLabel+"."); ok {
		u.Host = ch.label + "." + rest
	}
	return u.String(), nil
}

// rpcBase is the JSON-RPC endpoint (without the key) of a chain: the NFT
// base with its /nft/v3 path swapped for /v2.
func rpcBase(catalogURL string, ch chain) (string, error) {
	base, err := nftBase(catalogURL, ch)
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(base)
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/nft/v3") + "/v2"
	return u.String(), nil
}
