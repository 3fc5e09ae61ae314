package wallet_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/guilds/guilds/internal/adapters/wallet"
)

var allHashes = regexp.MustCompile(`tx_hash: (0x[0-9a-f]{64})`)

// The OpenSea tools against OpenSea API v2's wire format and a local node:
// buying a listed NFT and a floor packs OpenSea's fulfilment as Seaport
// calldata (fulfillBasicOrder_efficient_6GL6yc, selector 0x00000000) paid
// with exactly the listing's price; accepting an offer approves OpenSea's
// conduit first, then calls fulfillAdvancedOrder paying nothing; a cancel
// goes through OpenSea's offchain cancel. Malformed arguments ask nothing.
func TestOpenSeaTools(t *testing.T) {
	node := startGanache(t, evmKey)
	wallet0 := addressOf(t, evmKey)
	protocol := addressOf(t, recipientKey)
	nft := crypto.PubkeyToAddress(mustKey(t).PublicKey)
	f := newFakes(t, node)
	f.swapTo, f.nft = protocol.Hex(), nft.Hex()
	a := &wallet.Adapter{}
	do := func(tool, args string) (string, error) {
		return a.Call(context.Background(), conn(f.URL(), goodValues()), tool, json.RawMessage(args))
	}

	out, err := do("opensea_buy", `{"chain":"ethereum","collection":"cool-cats","token_id":"42"}`)
	if err != nil || !strings.Contains(out, "buys: cool-cats #42") || !strings.Contains(out, "amount: 0.01 ETH") || !strings.Contains(out, "status: confirmed") ||
		!strings.Contains(out, "to: "+protocol.Hex()+" (Seaport, order "+listingHash+")") {
		t.Fatalf("buy: %q %v", out, err)
	}
	from, tx := txSender(t, node, allHashes.FindStringSubmatch(out)[1])
	in := tx.Data()
	if from != wallet0 || tx.Value().String() != "10000000000000000" || !bytes.Equal(in[:4], []byte{0, 0, 0, 0}) ||
		!bytes.Contains(in, common.LeftPadBytes(big.NewInt(42).Bytes(), 32)) || !bytes.Contains(in, bytes.Repeat([]byte{0xab}, 65)) {
		t.Fatalf("buy calldata %x, value %s, from %s", in, tx.Value(), from.Hex())
	}
	if q := f.asksOf("/v2/opensea/listings/fulfillment_data"); len(q) != 1 || !strings.Contains(q[0], `"hash":"`+listingHash+`"`) ||
		!strings.Contains(q[0], `"address":"`+wallet0.Hex()+`"`) {
		t.Fatalf("fulfilment asked %v", q)
	}

	if out, err := do("opensea_buy", `{"chain":"ethereum","collection":"cool-cats"}`); err != nil || !strings.Contains(out, "buys: the floor of cool-cats") {
		t.Fatalf("floor: %q %v", out, err)
	}

	out, err = do("opensea_accept_offer", `{"chain":"ethereum","contract":"`+nft.Hex()+`","token_id":"42"}`)
	hashes := allHashes.FindAllStringSubmatch(out, -1)
	if err != nil || len(hashes) != 2 || strings.Count(out, "status: confirmed") != 2 || !strings.Contains(out, "approval: OpenSea's conduit") ||
		!strings.Contains(out, "receives: 0.005 WETH (before fees)") {
		t.Fatalf("accept offer: %q %v", out, err)
	}
	_, approval := txSender(t, node, hashes[0][1])
	_, fill := txSender(t, node, hashes[1][1])
	sel := crypto.Keccak256([]byte("fulfillAdvancedOrder(((address,address,(uint8,address,uint256,uint256,uint256)[],(uint8,address,uint256,uint256,uint256,address)[],uint8,uint256,uint256,bytes32,uint256,bytes32,uint256),uint120,uint120,bytes,bytes),(uint256,uint8,uint256,uint256,bytes32[])[],bytes32,address)"))[:4]
	if *approval.To() != nft || !bytes.Equal(approval.Data()[:4], []byte{0xa2, 0x2c, 0xb4, 0x65}) || *fill.To() != protocol ||
		!bytes.Equal(fill.Data()[:4], sel) || fill.Value().Sign() != 0 {
		t.Fatalf("accept offer sent %x to %s, then %x to %s", approval.Data()[:4], approval.To().Hex(), fill.Data()[:4], fill.To().Hex())
	}

	if out, err := do("opensea_cancel_order", `{"chain":"ethereum","order_hash":"`+listingHash+`"}`); err != nil || !strings.Contains(out, "cancelled: order "+listingHash) {
		t.Fatalf("cancel: %q %v", out, err)
	}

	// Seaport's getCounter answers 0 on the local node; WETH is the test's token code.
	if err := rpcCall(node, "evm_setAccountCode", new(bool), "0x0000000000000068F116a894984e2DB1123eB395", "0x600060005260206000f3"); err != nil {
		t.Fatal(err)
	}
	if err := rpcCall(node, "evm_setAccountCode", new(bool), "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", hexutil.Encode(tokenRuntime())); err != nil {
		t.Fatal(err)
	}
	out, err = do("opensea_list", `{"chain":"ethereum","contract":"`+nft.Hex()+`","token_id":"42","price":"1"}`)
	if err != nil || !strings.Contains(out, "amount: 1 ETH (proceeds 0.975)") || !strings.Contains(out, "fees: 0.025 ETH (2.5%) to 0x0000a26b00c1F0DF003000390027140000fAa719") ||
		!strings.Contains(out, "order_hash: 0x3333") || !strings.Contains(out, "no gas") {
		t.Fatalf("list: %q %v", out, err)
	}
	posted := f.asksOf("/v2/opensea/orders/ethereum/seaport/listings")
	signedBy(t, posted[0], "parameters", "signature", wallet0)

	out, err = do("opensea_collection_offer", `{"chain":"ethereum","collection":"cool-cats","price":"0.5"}`)
	if err != nil || !strings.Contains(out, "bids on: any NFT of cool-cats") || !strings.Contains(out, "amount: 0.5 WETH") ||
		!strings.Contains(out, "approval: 0.5 WETH for "+"0x1E0049783F008A0085193E00003D00cd54003c71") || !strings.Contains(out, "order_hash: 0x4444") {
		t.Fatalf("collection offer: %q %v", out, err)
	}
	var offer struct {
		ProtocolData json.RawMessage `json:"protocol_data"`
	}
	_ = json.Unmarshal([]byte(f.asksOf("/v2/opensea/offers")[0]), &offer)
	signedBy(t, string(offer.ProtocolData), "parameters", "signature", wallet0)

	asked := f.total()
	for tool, args := range map[string]string{
		"opensea_buy":              `{"chain":"ethereum","collection":"cool/cats"}`,
		"opensea_accept_offer":     `{"chain":"ethereum","contract":"` + nft.Hex() + `","token_id":"forty-two"}`,
		"opensea_cancel_order":     `{"chain":"ethereum","order_hash":"0x12"}`,
		"opensea_list":             `{"chain":"ethereum","contract":"` + nft.Hex() + `","token_id":"42","price":"1.0000000000000000001"}`,
		"opensea_collection_offer": `{"chain":"ink","collection":"cool-cats","price":"1"}`,
	} {
		if _, err := do(tool, args); err == nil {
			t.Errorf("%s %s: no error", tool, args)
		}
	}
	if f.total() != asked || len(f.asksOf("/v2/opensea/orders/chain/ethereum/protocol/0x0000000000000068F116a894984e2DB1123eB395/0x12/cancel")) != 0 {
		t.Fatal("a refused OpenSea call asked a service")
	}
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signedBy recovers the signer of a posted Seaport order (EIP-712 on chain 1).
func signedBy(t *testing.T, body, paramsKey, sigKey string, want common.Address) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("posted %q: %v", body, err)
	}
	td, err := wallet.SeaportTypedData(big.NewInt(1), m[paramsKey])
	if err != nil {
		t.Fatal(err)
	}
	hash, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		t.Fatal(err)
	}
	var sigHex string
	_ = json.Unmarshal(m[sigKey], &sigHex)
	sig := common.FromHex(sigHex)
	if len(sig) != 65 {
		t.Fatalf("signature %q", sigHex)
	}
	sig[64] -= 27
	pub, err := crypto.SigToPub(hash, sig)
	if err != nil || crypto.PubkeyToAddress(*pub) != want {
		t.Fatalf("the order is signed by %v, not %s (%v)", pub, want.Hex(), err)
	}
}
