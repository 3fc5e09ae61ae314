package wallet_test

import (
	"context"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	_ "github.com/guilds/guilds/internal/adapters/wallet"
)

func with(v map[string]string, field, value string) map[string]string {
	out := map[string]string{}
	for k, x := range v {
		out[k] = x
	}
	out[field] = value
	return out
}

func addressOf(t *testing.T, keyHex string) common.Address {
	k, err := crypto.HexToECDSA(keyHex)
	if err != nil {
		t.Fatal(err)
	}
	return crypto.PubkeyToAddress(k.PublicKey)
}

var txHash = regexp.MustCompile(`tx_hash: (0x[0-9a-f]{64})`)

// The Wallet through the session pool on a real Postgres, against a real
// local Ethereum node (ganache) behind a fake Alchemy URL and local fakes of
// Solana JSON-RPC, OpenSea and Uniswap: a refused key of each service is
// refused, the good login lists every tool and hints both addresses; then
// balances, a native send, an ERC-20 send, a call with raw calldata and a
// submitted Solana transaction, with the balances after read from the node
// itself and the signatures recovered to the wallet's addresses. Bad input
// signs and sends nothing.
func TestThroughThePoolOnALocalNode(t *testing.T) {
	node := startGanache(t, evmKey)
	wallet := addressOf(t, evmKey)
	recipient := addressOf(t, recipientKey)
	token := deployToken(t, node, evmKey, big.NewInt(1_000_000_000_000)) // 1,000,000 TST at 6 decimals
	f := newFakes(t, node)
	var before hexutil.Big
	if err := rpcCall(node, "eth_getBalance", &before, wallet, "latest"); err != nil {
		t.Fatal(err)
	}

	var sentHashes []string
	hashOf := func(t *testing.T, out string, _ error) {
		m := txHash.FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, "status: confirmed") {
			t.Fatalf("no confirmed tx_hash in %q", out)
		}
		sentHashes = append(sentHashes, m[1])
	}
	unsigned := solanaTransfer(t)
	transferData := "0xa9059cbb" + common.Bytes2Hex(common.LeftPadBytes(recipient.Bytes(), 32)) + common.Bytes2Hex(common.LeftPadBytes(big.NewInt(1).Bytes(), 32))

	var rawBefore int
	adapterstest.Run(t, adapterstest.Spec{
		Slug: "wallet", URL: f.URL(),
		BadValues: []map[string]string{
			with(goodValues(), "alchemy_api_key", "alk-bad-0123456789"),
			with(goodValues(), "opensea_api_key", "osk-bad-0123456789"),
			with(goodValues(), "uniswap_api_key", "unk-bad-0123456789"),
		},
		GoodValues: goodValues(),
		Secrets:    []string{evmKey, strings.ToUpper(evmKey)},
		Tools:      12, Listed: []string{"wallet_get_address", "wallet_uniswap_swap"},
		Hint: "0x2c75…5c23 · " + shortSol(solKey.PublicKey().String()),
		Calls: []adapterstest.Call{
			{Tool: "get_address", Want: []string{"evm: " + wallet.Hex(), "solana: " + solKey.PublicKey().String()}},
			{Tool: "get_balance", Args: `{"chain":"ethereum"}`, Want: []string{"balance: 99.99", " ETH\nraw: " + (*big.Int)(&before).String() + " (18 decimals)"}},
			{Tool: "get_balance", Args: `{"chain":"ethereum","token":"` + token.Hex() + `"}`, Want: []string{"balance: 1000000 TST"}},
			{Tool: "send", Args: `{"chain":"ethereum","to":"` + recipient.Hex() + `","amount":"1.5"}`,
				Want: []string{"chain: ethereum", "from: " + wallet.Hex(), "to: " + recipient.Hex(), "amount: 1.5 ETH", "max_fee: "}, Check: hashOf},
			{Tool: "send", Args: `{"chain":"ethereum","to":"` + recipient.Hex() + `","amount":"12.345678","token":"` + token.Hex() + `"}`,
				Want: []string{"amount: 12.345678 TST"}, Check: hashOf},
			{Tool: "call", Args: `{"chain":"ethereum","to":"` + token.Hex() + `","data":"` + transferData + `"}`,
				Want: []string{"selector 0xa9059cbb", "amount: 0 ETH"}, Check: hashOf},
			{Tool: "get_balance", Args: `{"chain":"ethereum","token":"` + token.Hex() + `"}`, Want: []string{"balance: 999987.654321 TST"}},
			{Tool: "get_balance", Args: `{"chain":"solana"}`, Want: []string{"balance: 2.5 SOL"}},
			{Tool: "submit", Args: `{"transaction":"` + unsigned + `"}`, Want: []string{"chain: solana", "to: the programs 11111111111111111111111111111111 ", "fee: 0.000005 SOL", "status: sent"},
				Check: func(t *testing.T, _ string, _ error) { rawBefore = f.asked("eth_sendRawTransaction") }},
			// Bad input: a clear error, and nothing signed or sent.
			{Tool: "send", Args: `{"chain":"dogechain","to":"` + recipient.Hex() + `","amount":"1"}`, WantErr: true, Want: []string{`unknown chain "dogechain"`}},
			{Tool: "send", Args: `{"chain":"ethereum","to":"` + recipient.Hex() + `","amount":"0.0000000000000000001"}`, WantErr: true, Want: []string{"19 decimals", "has 18"}},
			{Tool: "send", Args: `{"chain":"ethereum","to":"` + recipient.Hex() + `","amount":"1.1234567","token":"` + token.Hex() + `"}`, WantErr: true, Want: []string{"7 decimals", "has 6"}},
			{Tool: "send", Args: `{"chain":"ethereum","to":"` + recipient.Hex() + `","amount":"1e3"}`, WantErr: true, Want: []string{"not a plain decimal"}},
			{Tool: "call", Args: `{"chain":"ethereum","to":"` + token.Hex() + `","data":"0xzz12"}`, WantErr: true, Want: []string{"data is not hex"}},
			{Tool: "call", Args: `{"chain":"solana","to":"` + token.Hex() + `","data":"0x"}`, WantErr: true, Want: []string{"not an EVM chain"}},
			{Tool: "submit", Args: `{"transaction":"not base64!"}`, WantErr: true, Want: []string{"transaction is not base64"}},
			{Tool: "submit", Args: `{"transaction":"aGVsbG8="}`, WantErr: true, Want: []string{"not a Solana transaction"}},
		},
	})
	if n := f.asked("eth_sendRawTransaction"); n != rawBefore || len(f.solSent) != 1 {
		t.Fatalf("bad input was sent: %d raw transactions after the good ones, %d Solana sends", n-rawBefore, len(f.solSent))
	}
	if f.verified != 1 || !f.solSent[0].Message.AccountKeys[0].Equals(solKey.PublicKey()) {
		t.Fatalf("the submitted Solana transaction's signature did not verify with the wallet's key")
	}

	// The node's own view: balances after, and each transaction signed by
	// the wallet's key (EIP-1559 on chain id 1).
	if len(sentHashes) != 3 {
		t.Fatalf("%d transactions sent", len(sentHashes))
	}
	for _, h := range sentHashes {
		from, tx := txSender(t, node, h)
		if from != wallet || tx.Type() != 2 || tx.ChainId().Int64() != 1 {
			t.Fatalf("%s: signed by %s, type %d, chain %s", h, from.Hex(), tx.Type(), tx.ChainId())
		}
	}
	var bal hexutil.Big
	if err := rpcCall(node, "eth_getBalance", &bal, recipient, "latest"); err != nil || (*big.Int)(&bal).String() != "1500000000000000000" {
		t.Fatalf("recipient holds %s wei, %v", (*big.Int)(&bal), err)
	}
	var raw hexutil.Bytes
	data := append(common.FromHex("0x70a08231"), common.LeftPadBytes(recipient.Bytes(), 32)...)
	if err := rpcCall(node, "eth_call", &raw, map[string]any{"to": token, "data": hexutil.Bytes(data)}, "latest"); err != nil ||
		new(big.Int).SetBytes(raw).String() != "12345679" {
		t.Fatalf("recipient holds %s token units, %v", new(big.Int).SetBytes(raw), err)
	}
	_ = context.Background()
}

func shortSol(s string) string { return s[:6] + "…" + s[len(s)-4:] }

// solanaTransfer is a prebuilt, unsigned transfer of 0.001 SOL from the
// wallet, base64 (as a dapp or an aggregator hands one over).
func solanaTransfer(t *testing.T) string {
	t.Helper()
	to := solana.PublicKeyFromBytes(make([]byte, 32))
	to[0] = 1
	tx, err := solana.NewTransaction([]solana.Instruction{system.NewTransferInstruction(1_000_000, solKey.PublicKey(), to).Build()},
		solana.HashFromBytes(make([]byte, 32)), solana.TransactionPayer(solKey.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	b64, err := tx.ToBase64()
	if err != nil {
		t.Fatal(err)
	}
	return b64
}
