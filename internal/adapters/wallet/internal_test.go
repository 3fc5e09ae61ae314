package wallet

import (
	"math/big"
	"testing"
)

// Production endpoints: Alchemy's host label per network, arc's own RPC,
// the public fallbacks, and the other services' hosts.
func TestEndpoints(t *testing.T) {
	ep, err := endpointsOf("https://eth-mainnet.g.alchemy.com/v2")
	if err != nil || !ep.alchemy {
		t.Fatal(err)
	}
	for name, want := range map[string][2]string{
		"ethereum":  {"https://eth-mainnet.g.alchemy.com/v2/k-1", ""},
		"polygon":   {"https://polygon-mainnet.g.alchemy.com/v2/k-1", "https://polygon-rpc.com"},
		"arbitrum":  {"https://arb-mainnet.g.alchemy.com/v2/k-1", "https://arb1.arbitrum.io/rpc"},
		"optimism":  {"https://opt-mainnet.g.alchemy.com/v2/k-1", "https://mainnet.optimism.io"},
		"bsc":       {"https://bnb-mainnet.g.alchemy.com/v2/k-1", "https://bsc-dataseed.bnbchain.org"},
		"base":      {"https://base-mainnet.g.alchemy.com/v2/k-1", ""},
		"hyperevm":  {"https://hyperliquid-mainnet.g.alchemy.com/v2/k-1", ""},
		"robinhood": {"https://robinhood-mainnet.g.alchemy.com/v2/k-1", ""},
		"ink":       {"https://ink-mainnet.g.alchemy.com/v2/k-1", ""},
		"arc":       {"https://rpc.mainnet.arc.io", ""},
	} {
		p, f := ep.rpc(evmChains[name], "k-1")
		if p != want[0] || f != want[1] {
			t.Errorf("%s: %s, %s", name, p, f)
		}
	}
	if got := ep.solana("k-1"); got != "https://solana-mainnet.g.alchemy.com/v2/k-1" {
		t.Errorf("solana: %s", got)
	}
	if got := ep.service("opensea", openseaURL); got != "https://api.opensea.io/api/v2" {
		t.Errorf("opensea: %s", got)
	}
	test, _ := endpointsOf("http://127.0.0.1:9/v2")
	if p, f := test.rpc(evmChains["polygon"], "k-1"); p != "http://127.0.0.1:9/v2/polygon/k-1" || f != "http://127.0.0.1:9/v2/public/polygon" {
		t.Errorf("a test URL: %s, %s", p, f)
	}
	if p, _ := test.rpc(evmChains["arc"], "k-1"); p != "http://127.0.0.1:9/v2/arc" {
		t.Errorf("arc under a test URL: %s", p)
	}
}

// Exact decimal conversion both ways, with math/big.
func TestUnits(t *testing.T) {
	for _, c := range []struct {
		in       string
		decimals int
		units    string
	}{
		{"1.5", 18, "1500000000000000000"}, {"0.000001", 6, "1"}, {"12.345678", 6, "12345678"}, {".5", 1, "5"}, {"7.", 0, "7"},
		{"115792089237316195423570985008687907853269984665640564039457584007913129639935", 0, "115792089237316195423570985008687907853269984665640564039457584007913129639935"},
	} {
		v, err := parseAmount("amount", c.in, c.decimals)
		if err != nil || v.String() != c.units {
			t.Errorf("%s at %d: %v %v", c.in, c.decimals, v, err)
		}
	}
	for _, bad := range []string{"", ".", "1.2.3", "+1", "1e3", "0x10", "1 000", "١"} {
		if _, err := parseAmount("amount", bad, 18); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := parseAmount("amount", "115792089237316195423570985008687907853269984665640564039457584007913129639936", 0); err == nil {
		t.Error("2^256 parsed")
	}
	for units, want := range map[string]string{"0": "0", "1": "0.000001", "1500000": "1.5", "12345678": "12.345678", "1000000": "1"} {
		n, _ := new(big.Int).SetString(units, 10)
		if got := formatUnits(n, 6); got != want {
			t.Errorf("%s: %s, want %s", units, got, want)
		}
	}
}
