package wallet_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"

	"github.com/guilds/guilds/internal/adapters/wallet"
)

// A broadcast whose answer is lost is not sent again: the result says the
// outcome is unknown and names the transaction hash to check.
func TestALostBroadcastIsNotResent(t *testing.T) {
	t.Parallel()
	f := newFakes(t, "")
	out, err := (&wallet.Adapter{}).Call(context.Background(), conn(f.URL(), goodValues()), "send",
		json.RawMessage(`{"chain":"ethereum","to":"0x63FaC9201494f0bd17B9892B9fae4d52fe3BD377","amount":"0.1"}`))
	if err != nil || !strings.Contains(out, "status: unknown") || !strings.Contains(out, "tx_hash: 0x") || !strings.Contains(out, "check tx_hash before sending again") {
		t.Fatalf("lost broadcast: %q %v", out, err)
	}
	if n := f.asked("eth_sendRawTransaction"); n != 1 {
		t.Fatalf("sent %d times", n)
	}
	if strings.Contains(out, alchemyKey) {
		t.Fatal("the key shows in the result")
	}
}

// An SPL token send creates the recipient's associated account when it has
// none, transfers with the mint's decimals, and is signed by the wallet.
func TestSolanaTokenSend(t *testing.T) {
	t.Parallel()
	f := newFakes(t, "")
	mint := "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	to := solana.NewWallet().PublicKey()
	out, err := (&wallet.Adapter{}).Call(context.Background(), conn(f.URL(), goodValues()), "send",
		json.RawMessage(`{"chain":"solana","to":"`+to.String()+`","amount":"2.5","token":"`+mint+`"}`))
	if err != nil || !strings.Contains(out, "amount: 2.5 of mint "+mint) || !strings.Contains(out, "status: sent") || f.verified != 1 {
		t.Fatalf("SPL send: %q %v", out, err)
	}
	if ins := f.solSent[0].Message.Instructions; len(ins) != 2 {
		t.Fatalf("%d instructions, want the account's creation and the transfer", len(ins))
	}
	if _, err := (&wallet.Adapter{}).Call(context.Background(), conn(f.URL(), goodValues()), "send",
		json.RawMessage(`{"chain":"solana","to":"`+to.String()+`","amount":"2.1234567","token":"`+mint+`"}`)); err == nil || !strings.Contains(err.Error(), "7 decimals") {
		t.Fatalf("too many decimals: %v", err)
	}
}
