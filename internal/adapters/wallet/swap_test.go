package wallet_test

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/guilds/guilds/internal/adapters/wallet"
)

// Swaps quote then execute against the aggregators' wire formats: LiFi on a
// local node (native coin sold, then a token sold after its approval),
// Uniswap's Trading API (approval, quote, swap) and Jupiter on Solana (its
// transaction signed by the wallet and verified by the fake node). Every
// result states chain, from, to, amount and fees; a chain an aggregator
// does not serve and an unbounded slippage are refused before anything is
// asked.
func TestSwaps(t *testing.T) {
	node := startGanache(t, evmKey)
	recipient := addressOf(t, recipientKey)
	token := deployToken(t, node, evmKey, big.NewInt(1_000_000_000_000))
	f := newFakes(t, node)
	f.swapTo = recipient.Hex()
	a := &wallet.Adapter{}
	do := func(tool, args string) (string, error) {
		out, err := a.Call(context.Background(), conn(f.URL(), goodValues()), tool, json.RawMessage(args))
		if strings.Contains(out, evmKey) || err != nil && strings.Contains(err.Error(), alchemyKey) {
			t.Fatal("a key leaked")
		}
		return out, err
	}

	out, err := do("swap", `{"chain":"ethereum","from_token":"ETH","to_token":"`+token.Hex()+`","amount":"0.25"}`)
	if err != nil || !strings.Contains(out, "amount: 0.25 ETH") || !strings.Contains(out, "expected: 2.5 TST (at least 2.4875)") ||
		!strings.Contains(out, "max_fee: ") || !strings.Contains(out, "status: confirmed") {
		t.Fatalf("LiFi native swap: %q %v", out, err)
	}
	if q := f.asksOf("/v2/lifi/quote"); len(q) != 1 || !strings.Contains(q[0], "fromAmount=250000000000000000&") || !strings.Contains(q[0], "slippage=0.0050") {
		t.Fatalf("LiFi was asked %v", q)
	}
	var bal hexutil.Big
	if err := rpcCall(node, "eth_getBalance", &bal, recipient, "latest"); err != nil || (*big.Int)(&bal).String() != "250000000000000000" {
		t.Fatalf("the swap paid %s wei, %v", (*big.Int)(&bal), err)
	}

	out, err = do("swap", `{"chain":"ethereum","from_token":"`+token.Hex()+`","to_token":"ETH","amount":"3.5","slippage":"1"}`)
	if err != nil || strings.Count(out, "status: confirmed") != 2 || !strings.Contains(out, "approval: 3.5 TST for "+recipient.Hex()) {
		t.Fatalf("LiFi token swap: %q %v", out, err)
	}

	out, err = do("uniswap_swap", `{"chain":"ethereum","from_token":"`+token.Hex()+`","to_token":"ETH","amount":"1.000001"}`)
	if err != nil || strings.Count(out, "status: confirmed") != 2 || !strings.Contains(out, "expected: 0.42 ETH") ||
		!strings.Contains(out, "amount: 1.000001 TST") {
		t.Fatalf("Uniswap swap: %q %v", out, err)
	}
	if q := f.asksOf("/v2/uniswap/quote"); len(q) != 1 || !strings.Contains(q[0], `"amount":"1000001"`) || !strings.Contains(q[0], `"protocols":["V2","V3","V4"]`) {
		t.Fatalf("Uniswap was asked %v", q)
	}

	out, err = do("swap", `{"chain":"solana","from_token":"SOL","to_token":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","amount":"0.5"}`)
	if err != nil || !strings.Contains(out, "amount: 0.5 of SOL") || !strings.Contains(out, "expected: 1.234567 of mint EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v") ||
		!strings.Contains(out, "fee: 0.000005 SOL") || f.verified != 1 {
		t.Fatalf("Jupiter swap: %q %v", out, err)
	}
	if q := f.asksOf("/v2/jupiter/quote"); len(q) != 1 || !strings.Contains(q[0], "amount=500000000") {
		t.Fatalf("Jupiter was asked %v", q)
	}

	asked := len(f.asksOf("/v2/lifi/quote")) + len(f.asksOf("/v2/uniswap/quote"))
	for args, want := range map[string]string{
		`{"chain":"ink","from_token":"ETH","to_token":"` + token.Hex() + `","amount":"1"}`:                          "does not run on ink",
		`{"chain":"ethereum","from_token":"ETH","to_token":"` + token.Hex() + `","amount":"1","slippage":"20"}`:     "at most 10%",
		`{"chain":"ethereum","from_token":"ETH","to_token":"` + token.Hex() + `","amount":"1.0000000000000000001"}`: "19 decimals",
		`{"chain":"ethereum","from_token":"ETH","to_token":"0xnothex","amount":"1"}`:                                "not an EVM address",
	} {
		if _, err := do("swap", args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	if _, err := do("uniswap_swap", `{"chain":"hyperevm","from_token":"HYPE","to_token":"`+token.Hex()+`","amount":"1"}`); err == nil ||
		!strings.Contains(err.Error(), "does not run on hyperevm") {
		t.Errorf("uniswap on hyperevm: %v", err)
	}
	if n := len(f.asksOf("/v2/lifi/quote")) + len(f.asksOf("/v2/uniswap/quote")); n != asked {
		t.Fatal("a refused swap was quoted")
	}
}
