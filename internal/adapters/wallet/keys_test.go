package wallet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/wallet"
	"github.com/guilds/guilds/internal/connectors"
)

func conn(base string, values map[string]string) adapters.Conn {
	return adapters.Conn{BaseURL: base, Cred: connectors.Credential{Extra: values}}
}

// Each malformed key is refused by Check before any service is asked,
// naming its field and never repeating the value.
func TestMalformedKeysAreNamed(t *testing.T) {
	t.Parallel()
	f := newFakes(t, "")
	a := &wallet.Adapter{}
	var nums []int
	for _, b := range solKey {
		nums = append(nums, int(b))
	}
	solArray, _ := json.Marshal(nums)
	for _, c := range []struct{ field, value, want string }{
		{"evm_private_key", "", "is required"},
		{"evm_private_key", "0x1234", "64 hex digits"},
		{"evm_private_key", "0x" + strings.Repeat("zz", 32), "hex digits only"},
		{"evm_private_key", "0x" + strings.Repeat("00", 32), "not a valid secp256k1"},
		{"solana_private_key", "", "is required"},
		{"solana_private_key", "0OIl-not-base58", "not base58"},
		{"solana_private_key", solKey.PublicKey().String(), "64-byte keypair"},
		{"solana_private_key", "[1,2,300]", "not a byte"},
		{"solana_private_key", "[" + strings.Repeat("1,", 63) + "1]", "not a keypair"},
		{"alchemy_api_key", "", "is required"},
		{"alchemy_api_key", "has space-0123456", "character"},
		{"opensea_api_key", "../../../etc-0123", "character"},
		{"uniswap_api_key", "uni/evil-0123456", "character"},
	} {
		v := with(goodValues(), c.field, c.value)
		n := f.count()
		_, err := a.Check(context.Background(), conn(f.URL(), v))
		var ke *wallet.KeyError
		if !errors.As(err, &ke) || ke.Field != c.field || !strings.Contains(err.Error(), c.want) || !errors.Is(err, adapters.ErrRejected) {
			t.Errorf("%s=%q: %v", c.field, c.value, err)
			continue
		}
		if c.value != "" && strings.Contains(err.Error(), c.value) {
			t.Errorf("%s: the error repeats the value: %v", c.field, err)
		}
		if f.count() != n {
			t.Errorf("%s: a service was asked", c.field)
		}
	}
	// The Solana CLI's JSON array of 64 bytes and a key without 0x are taken.
	v := with(with(goodValues(), "solana_private_key", string(solArray)), "evm_private_key", evmKey)
	if hint, err := a.Check(context.Background(), conn(f.URL(), v)); err != nil || !strings.HasPrefix(hint, "0x2c75…5c23 · ") {
		t.Fatalf("JSON array key: %q %v", hint, err)
	}
}

// A key a service refuses is named; an unreachable service is not a
// refusal; without a Uniswap key, Uniswap is not asked and uniswap_swap is
// not listed.
func TestCheckNamesTheRefusedKey(t *testing.T) {
	t.Parallel()
	f := newFakes(t, "")
	a := &wallet.Adapter{}
	for field, bad := range map[string]string{"alchemy_api_key": "alk-bad-0123456789", "opensea_api_key": "osk-bad-0123456789", "uniswap_api_key": "unk-bad-0123456789"} {
		_, err := a.Check(context.Background(), conn(f.URL(), with(goodValues(), field, bad)))
		var ke *wallet.KeyError
		if !errors.As(err, &ke) || ke.Field != field {
			t.Errorf("%s refused: %v", field, err)
		}
	}
	noUni := goodValues()
	delete(noUni, "uniswap_api_key")
	if _, err := a.Check(context.Background(), conn(f.URL(), noUni)); err != nil {
		t.Fatalf("without a Uniswap key: %v", err)
	}
	if a.Lists(connectors.Credential{Extra: noUni}, "uniswap_swap") || !a.Lists(connectors.Credential{Extra: noUni}, "swap") ||
		!a.Lists(connectors.Credential{Extra: goodValues()}, "uniswap_swap") {
		t.Fatal("uniswap_swap is listed only with a Uniswap key")
	}
	f.Close()
	_, err := a.Check(context.Background(), conn(f.URL(), goodValues()))
	if err == nil || errors.Is(err, adapters.ErrRejected) || strings.Contains(err.Error(), alchemyKey) {
		t.Fatalf("service down: %v", err)
	}
}

// Polygon's Alchemy network refuses the key (403): the public RPC answers,
// and the result says so.
func TestPublicRPCFallback(t *testing.T) {
	t.Parallel()
	f := newFakes(t, "")
	out, err := (&wallet.Adapter{}).Call(context.Background(), conn(f.URL(), goodValues()), "get_balance", json.RawMessage(`{"chain":"polygon"}`))
	if err != nil || !strings.Contains(out, "balance: 2 POL") {
		t.Fatalf("polygon balance: %q %v", out, err)
	}
	if f.asked("eth_getBalance") != 1 {
		t.Fatalf("asked %d", f.count())
	}
	// base has no public fallback: the refusal is the answer.
	_, err = (&wallet.Adapter{}).Call(context.Background(), conn(f.URL(), goodValues()), "get_balance", json.RawMessage(`{"chain":"base"}`))
	if err == nil {
		t.Fatal("base answered without a node")
	}
}

// Amounts are exact decimal strings: every digit kept, none invented.
func TestAmountsAreExact(t *testing.T) {
	t.Parallel()
	f := newFakes(t, "")
	a := &wallet.Adapter{}
	for _, c := range []struct{ args, want string }{
		{`{"chain":"solana","to":"11111111111111111111111111111112","amount":"0.0000000001"}`, "has 10 decimals; this token has 9"},
		{`{"chain":"solana","to":"11111111111111111111111111111112","amount":"-1"}`, "not a plain decimal"},
		{`{"chain":"solana","to":"11111111111111111111111111111112","amount":"1,5"}`, "not a plain decimal"},
		{`{"chain":"solana","to":"11111111111111111111111111111112","amount":"0"}`, "more than zero"},
		{`{"chain":"solana","to":"11111111111111111111111111111112","amount":"99999999999"}`, "more than a Solana transfer can carry"},
		{`{"chain":"ethereum","to":"0x12","amount":"1"}`, "not an EVM address"},
		{`{"chain":"ethereum","to":"0x63FaC9201494f0bd17B9892B9fae4d52fe3BD377","amount":"` + strings.Repeat("9", 80) + `"}`, "more than the chain can represent"},
		{`{"to":"0x63FaC9201494f0bd17B9892B9fae4d52fe3BD377","amount":"1"}`, "chain is required"},
	} {
		_, err := a.Call(context.Background(), conn(f.URL(), goodValues()), "send", json.RawMessage(c.args))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.args, err, c.want)
		}
	}
	if f.asked("sendTransaction")+f.asked("eth_sendRawTransaction") != 0 {
		t.Fatal("a refused amount was sent")
	}
	out, err := a.Call(context.Background(), conn(f.URL(), goodValues()), "send", json.RawMessage(`{"chain":"solana","to":"11111111111111111111111111111112","amount":"0.123456789"}`))
	if err != nil || !strings.Contains(out, "amount: 0.123456789 SOL") || f.verified != 1 {
		t.Fatalf("exact SOL send: %q %v", out, err)
	}
	ix := []byte(f.solSent[0].Message.Instructions[0].Data)
	if !bytes.Equal(ix[4:12], []byte{0x15, 0xcd, 0x5b, 0x07, 0, 0, 0, 0}) { // 123456789 lamports, little-endian
		t.Fatalf("transfer data %v", ix)
	}
}
