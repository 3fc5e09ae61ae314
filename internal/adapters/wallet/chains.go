package wallet

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// chain is a network the tools accept.
type chain struct {
	name    string
	id      int64  // EIP-155 chain id; 0: the one the RPC answers (checked against nothing)
	label   string // Alchemy's host label ("" for arc and solana's own)
	fixed   string // an RPC other than Alchemy's (arc)
	public  string // the public RPC tried when Alchemy refuses the key for this network
	symbol  string // native coin
	lifi    bool
	uniswap bool
}

const nativeDecimals = 18

var evmChains = map[string]chain{
	"ethereum":  {name: "ethereum", id: 1, label: "eth-mainnet", symbol: "ETH", lifi: true, uniswap: true},
	"polygon":   {name: "polygon", id: 137, label: "polygon-mainnet", public: "https://polygon-rpc.com", symbol: "POL", lifi: true, uniswap: true},
	"base":      {name: "base", id: 8453, label: "base-mainnet", symbol: "ETH", lifi: true, uniswap: true},
	"arbitrum":  {name: "arbitrum", id: 42161, label: "arb-mainnet", public: "https://arb1.arbitrum.io/rpc", symbol: "ETH", lifi: true, uniswap: true},
	"bsc":       {name: "bsc", id: 56, label: "bnb-mainnet", public: "https://bsc-dataseed.bnbchain.org", symbol: "BNB", lifi: true, uniswap: true},
	"optimism":  {name: "optimism", id: 10, label: "opt-mainnet", public: "https://mainnet.optimism.io", symbol: "ETH", lifi: true, uniswap: true},
	"ink":       {name: "ink", id: 57073, label: "ink-mainnet", symbol: "ETH", uniswap: true},
	"robinhood": {name: "robinhood", label: "robinhood-mainnet", symbol: "ETH", lifi: true, uniswap: true},
	"hyperevm":  {name: "hyperevm", id: 999, label: "hyperliquid-mainnet", symbol: "HYPE", lifi: true},
	"arc":       {name: "arc", fixed: "https://rpc.mainnet.arc.io", symbol: "USDC", uniswap: true},
}

const solanaName = "solana"

var chainAliases = map[string]string{
	"eth": "ethereum", "mainnet": "ethereum", "matic": "polygon", "arb": "arbitrum", "bnb": "bsc",
	"op": "optimism", "sol": "solana", "hyperliquid": "hyperevm",
}

// chainName normalises a chain argument; unknown names are an error listing
// the known ones.
func chainName(raw string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(raw))
	if a, ok := chainAliases[n]; ok {
		n = a
	}
	if _, ok := evmChains[n]; ok || n == solanaName {
		return n, nil
	}
	names := []string{solanaName}
	for k := range evmChains {
		names = append(names, k)
	}
	sort.Strings(names)
	if n == "" {
		return "", fmt.Errorf("chain is required: one of %s", strings.Join(names, ", "))
	}
	return "", fmt.Errorf("unknown chain %q: use one of %s", raw, strings.Join(names, ", "))
}

func evmChain(raw string) (chain, error) {
	n, err := chainName(raw)
	if err != nil {
		return chain{}, err
	}
	if n == solanaName {
		return chain{}, fmt.Errorf("%s is not an EVM chain", n)
	}
	return evmChains[n], nil
}

// endpoints are the services one call reaches. The catalog row names
// Alchemy's Ethereum JSON-RPC (https://eth-mainnet.g.alchemy.com/v2);
// another network is the same URL with its label in place of eth-mainnet.
// A row pointing anywhere else (a proxy, a test server) serves every
// service under its own URL: /{chain}/{key} for a network's RPC, /arc,
// /public/{chain}, /solana/{key}, /jupiter, /lifi, /uniswap and /opensea.
type endpoints struct {
	alchemy bool
	base    *url.URL
}

const alchemyLabel = "eth-mainnet"

// Production hosts of the services other than Alchemy.
const (
	jupiterURL = "https://lite-api.jup.ag/swap/v1"
	lifiURL    = "https://li.quest/v1"
	uniswapURL = "https://trade-api.gateway.uniswap.org/v1"
	openseaURL = "https://api.opensea.io/api/v2"
)

func endpointsOf(catalogURL string) (endpoints, error) {
	u, err := url.Parse(strings.TrimRight(catalogURL, "/"))
	if err != nil || u.Host == "" {
		return endpoints{}, fmt.Errorf("the catalog URL of the Wallet is not a URL")
	}
	return endpoints{alchemy: strings.HasPrefix(u.Host, alchemyLabel+"."), base: u}, nil
}

func (e endpoints) under(p string) string {
	u := *e.base
	u.Path = strings.TrimRight(u.Path, "/") + p
	return u.String()
}

// rpc is a chain's JSON-RPC URL with the key, and the public one to fall
// back on ("" when it has none).
func (e endpoints) rpc(ch chain, key string) (primary, fallback string) {
	if !e.alchemy {
		if ch.fixed != "" {
			return e.under("/arc"), ""
		}
		if ch.public != "" {
			fallback = e.under("/public/" + ch.name)
		}
		return e.under("/" + ch.name + "/" + url.PathEscape(key)), fallback
	}
	if ch.fixed != "" {
		return ch.fixed, ""
	}
	u := *e.base
	u.Host = ch.label + strings.TrimPrefix(u.Host, alchemyLabel)
	u.Path = strings.TrimRight(u.Path, "/") + "/" + url.PathEscape(key)
	return u.String(), ch.public
}

func (e endpoints) solana(key string) string {
	if !e.alchemy {
		return e.under("/solana/" + url.PathEscape(key))
	}
	u := *e.base
	u.Host = "solana-mainnet" + strings.TrimPrefix(u.Host, alchemyLabel)
	u.Path = strings.TrimRight(u.Path, "/") + "/" + url.PathEscape(key)
	return u.String()
}

func (e endpoints) service(name, production string) string {
	if e.alchemy {
		return production
	}
	return e.under("/" + name)
}
