package wallet_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/guilds/guilds/internal/adapters/wallet"
)

// BenchmarkSendOnLocalNode is one native send on ganache, from the call's
// arguments to its receipt (chain id, nonce, gas estimate, fees, signing,
// broadcast and the receipt poll).
func BenchmarkSendOnLocalNode(b *testing.B) {
	node := startGanache(b, evmKey)
	f := newFakes(b, node)
	a := &wallet.Adapter{}
	args := json.RawMessage(`{"chain":"ethereum","to":"0x63FaC9201494f0bd17B9892B9fae4d52fe3BD377","amount":"0.000001"}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Call(context.Background(), conn(f.URL(), goodValues()), "send", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck is Connect's check of the five keys against local fakes.
func BenchmarkCheck(b *testing.B) {
	f := newFakes(b, "")
	a := &wallet.Adapter{}
	for i := 0; i < b.N; i++ {
		if _, err := a.Check(context.Background(), conn(f.URL(), goodValues())); err != nil {
			b.Fatal(err)
		}
	}
}
