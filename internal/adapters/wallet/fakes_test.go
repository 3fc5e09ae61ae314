package wallet_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/system"
)

const (
	alchemyKey = "alk-good-0123456789"
	openseaKey = "osk-good-0123456789"
	uniswapKey = "unk-good-0123456789"
	// The wallet's EVM key (also a ganache account) and a recipient's.
	evmKey       = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	recipientKey = "8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f"
)

// The wallet's Solana keypair, made from a fixed seed.
var solKey = solana.PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)))

func goodValues() map[string]string {
	return map[string]string{"evm_private_key": "0x" + evmKey, "solana_private_key": solKey.String(),
		"alchemy_api_key": alchemyKey, "opensea_api_key": openseaKey, "uniswap_api_key": uniswapKey}
}

// fakeServices is every service the Wallet reaches, under one URL as a
// non-Alchemy catalog URL lays them out (/v2/{chain}/{key}, /v2/solana/{key},
// /v2/public/{chain}, /v2/opensea, /v2/uniswap). Ethereum's RPC is proxied to
// a ganache node when one is given; polygon's Alchemy RPC refuses the key
// (403), so its public RPC answers.
type fakeServices struct {
	*httptest.Server
	node string // ganache URL, "" for none

	mu       sync.Mutex
	methods  []string // every JSON-RPC method asked, "chain method"
	solSent  []*solana.Transaction
	verified int // submitted Solana signatures that verify with the wallet's key
	// swapTo is where the fake aggregators' EVM transactions go (and the
	// fake OpenSea's orders' protocol); nft is the NFT contract it knows.
	swapTo string
	nft    string
	asks   []string // aggregator requests: "path query-or-body"
}

func (f *fakeServices) ask(r *http.Request, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asks = append(f.asks, r.URL.Path+" "+r.URL.RawQuery+string(body))
}

func (f *fakeServices) asksOf(path string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, a := range f.asks {
		if strings.HasPrefix(a, path+" ") {
			out = append(out, strings.TrimPrefix(a, path+" "))
		}
	}
	return out
}

func newFakes(t testing.TB, node string) *fakeServices {
	f := &fakeServices{node: node}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// URL is the catalog URL to give the row.
func (f *fakeServices) URL() string { return f.Server.URL + "/v2" }

func (f *fakeServices) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.methods)
}

// total counts every request: JSON-RPC and REST.
func (f *fakeServices) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.methods) + len(f.asks)
}

func (f *fakeServices) asked(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.methods {
		if strings.HasSuffix(m, " "+method) {
			n++
		}
	}
	return n
}

func (f *fakeServices) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v2/"), "/")
	switch {
	case parts[0] == "opensea":
		if r.Header.Get("X-API-KEY") != openseaKey {
			http.Error(w, `{"detail":"Invalid API key"}`, http.StatusUnauthorized)
			return
		}
		f.openseaAPI(w, r, strings.Join(parts[1:], "/"))
	case parts[0] == "uniswap" && len(parts) == 2 && parts[1] == "supported_chains":
		if r.Header.Get("x-api-key") != uniswapKey {
			http.Error(w, `{"errorCode":"Unauthorized"}`, http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, `{"chains":[1,10,56,137,8453,42161]}`)
	case parts[0] == "lifi" || parts[0] == "jupiter" || parts[0] == "uniswap":
		f.aggregator(w, r, parts[0]+"/"+strings.Join(parts[1:], "/"))
	case parts[0] == "public" && len(parts) == 2 && parts[1] == "polygon":
		f.rpc(w, r, "polygon-public", polygonRPC)
	case len(parts) == 2 && parts[1] != alchemyKey:
		http.Error(w, `{"error":"Must be authenticated!"}`, http.StatusUnauthorized)
	case len(parts) == 2 && parts[0] == "polygon":
		http.Error(w, `{"error":"POLYGON_MAINNET is not enabled for this app."}`, http.StatusForbidden)
	case len(parts) == 2 && parts[0] == "ethereum":
		f.rpc(w, r, "ethereum", f.ethereum)
	case len(parts) == 2 && parts[0] == "solana":
		f.rpc(w, r, "solana", f.solana)
	default:
		http.NotFound(w, r)
	}
}

// lostAnswer makes rpc drop the connection instead of answering.
const lostAnswer = "\x00lost"

type rpcReq struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// rpc decodes a JSON-RPC request, records its method and answers what
// answer returns (a result, or an error message).
func (f *fakeServices) rpc(w http.ResponseWriter, r *http.Request, chain string, answer func(body []byte, q rpcReq) (any, string)) {
	body, _ := io.ReadAll(r.Body)
	var q rpcReq
	if err := json.Unmarshal(body, &q); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.methods = append(f.methods, chain+" "+q.Method)
	f.mu.Unlock()
	res, msg := answer(body, q)
	if msg == lostAnswer {
		// The request arrived; its answer never does.
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			_ = conn.Close()
		}
		return
	}
	out := map[string]any{"jsonrpc": "2.0", "id": q.ID}
	if msg != "" {
		out["error"] = map[string]any{"code": -32000, "message": msg}
	} else {
		out["result"] = res
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (f *fakeServices) ethereum(body []byte, q rpcReq) (any, string) {
	if f.node == "" {
		// A node that takes a transaction and loses the answer.
		switch q.Method {
		case "eth_blockNumber":
			return "0x10", ""
		case "eth_chainId":
			return "0x1", ""
		case "eth_getTransactionCount":
			return "0x0", ""
		case "eth_estimateGas":
			return "0x5208", ""
		case "eth_getBlockByNumber":
			return map[string]any{"number": "0x10", "baseFeePerGas": "0x3b9aca00"}, ""
		case "eth_maxPriorityFeePerGas":
			return "0x3b9aca00", ""
		case "eth_sendRawTransaction":
			return nil, lostAnswer
		}
		return nil, "no node behind this fake"
	}
	resp, err := http.Post(f.node, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err.Error()
	}
	defer resp.Body.Close()
	var ans struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return nil, err.Error()
	}
	if ans.Error != nil {
		return nil, ans.Error.Message
	}
	return ans.Result, ""
}

func polygonRPC(_ []byte, q rpcReq) (any, string) {
	switch q.Method {
	case "eth_chainId":
		return "0x89", ""
	case "eth_getBalance":
		return "0x1bc16d674ec80000", "" // 2 POL
	}
	return nil, "method not served by this fake"
}

// solana speaks the Solana JSON-RPC methods the Wallet uses; a sent
// transaction's signatures are verified against its signers' keys.
func (f *fakeServices) solana(_ []byte, q rpcReq) (any, string) {
	ctxd := map[string]any{"slot": 321}
	switch q.Method {
	case "getSlot":
		return 321, ""
	case "getBalance":
		return map[string]any{"context": ctxd, "value": 2_500_000_000}, ""
	case "getLatestBlockhash":
		return map[string]any{"context": ctxd, "value": map[string]any{"blockhash": solana.HashFromBytes(bytes.Repeat([]byte{9}, 32)).String(),
			"lastValidBlockHeight": 400}}, ""
	case "getFeeForMessage":
		return map[string]any{"context": ctxd, "value": 5000}, ""
	case "getTokenSupply":
		return map[string]any{"context": ctxd, "value": map[string]any{"amount": "1000000000", "decimals": 6, "uiAmountString": "1000"}}, ""
	case "getTokenAccountsByOwner":
		return map[string]any{"context": ctxd, "value": []any{}}, ""
	case "sendTransaction":
		var b64 string
		if len(q.Params) == 0 || json.Unmarshal(q.Params[0], &b64) != nil {
			return nil, "no transaction"
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, "not base64"
		}
		tx, err := solana.TransactionFromBytes(raw)
		if err != nil {
			return nil, "not a transaction: " + err.Error()
		}
		msg, _ := tx.Message.MarshalBinary()
		ok := 0
		for i, sig := range tx.Signatures {
			if ed25519.Verify(ed25519.PublicKey(tx.Message.AccountKeys[i][:]), msg, sig[:]) {
				ok++
			}
		}
		if ok != len(tx.Signatures) {
			return nil, "Transaction signature verification failure"
		}
		f.mu.Lock()
		f.solSent = append(f.solSent, tx)
		f.verified += ok
		f.mu.Unlock()
		return tx.Signatures[0].String(), ""
	}
	return nil, "method not served by this fake: " + q.Method
}

// aggregator speaks LiFi's /quote, Jupiter's /quote and /swap, and Uniswap's
// Trading API /check_approval, /quote and /swap, the way their answers are
// shaped; the EVM transactions they build pay f.swapTo.
func (f *fakeServices) aggregator(w http.ResponseWriter, r *http.Request, route string) {
	body, _ := io.ReadAll(r.Body)
	f.ask(r, body)
	w.Header().Set("Content-Type", "application/json")
	q := r.URL.Query()
	switch route {
	case "lifi/quote":
		value := "0x0"
		if q.Get("fromToken") == "0x0000000000000000000000000000000000000000" {
			value = "0x" + mustBig(q.Get("fromAmount")).Text(16)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"tool": "uniswap", "estimate": map[string]any{"toAmount": "2500000", "toAmountMin": "2487500",
			"approvalAddress": f.swapTo}, "transactionRequest": map[string]any{"to": f.swapTo, "data": "0x", "value": value, "chainId": 1}})
	case "jupiter/quote":
		_ = json.NewEncoder(w).Encode(map[string]any{"inputMint": q.Get("inputMint"), "outputMint": q.Get("outputMint"), "inAmount": q.Get("amount"),
			"outAmount": "1234567", "otherAmountThreshold": "1228394", "slippageBps": 50, "routePlan": []any{}})
	case "jupiter/swap":
		var in struct {
			User string `json:"userPublicKey"`
		}
		_ = json.Unmarshal(body, &in)
		payer := solana.MustPublicKeyFromBase58(in.User)
		tx, _ := solana.NewTransaction([]solana.Instruction{system.NewTransferInstruction(5000, payer, solana.SystemProgramID).Build()},
			solana.HashFromBytes(bytes.Repeat([]byte{9}, 32)), solana.TransactionPayer(payer))
		b64, _ := tx.ToBase64()
		_ = json.NewEncoder(w).Encode(map[string]any{"swapTransaction": b64, "lastValidBlockHeight": 400})
	case "uniswap/check_approval", "uniswap/quote", "uniswap/swap":
		if r.Header.Get("x-api-key") != uniswapKey {
			http.Error(w, `{"errorCode":"Unauthorized"}`, http.StatusForbidden)
			return
		}
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		switch route {
		case "uniswap/check_approval":
			token, _ := in["token"].(string)
			_ = json.NewEncoder(w).Encode(map[string]any{"approval": map[string]any{"to": token, "from": in["walletAddress"],
				"data": "0x095ea7b3" + strings.Repeat("0", 24) + strings.TrimPrefix(strings.ToLower(f.swapTo), "0x") + strings.Repeat("f", 64), "value": "0x00"}})
		case "uniswap/quote":
			_ = json.NewEncoder(w).Encode(map[string]any{"routing": "CLASSIC", "permitData": nil,
				"quote": map[string]any{"input": map[string]any{"amount": in["amount"]}, "output": map[string]any{"amount": "420000000000000000"}}})
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"swap": map[string]any{"to": f.swapTo, "data": "0x", "value": "0x00"}})
		}
	default:
		http.NotFound(w, r)
	}
}

func mustBig(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("not a number: " + s)
	}
	return v
}

const (
	listingHash = "0x1111111111111111111111111111111111111111111111111111111111111111"
	offerHash   = "0x2222222222222222222222222222222222222222222222222222222222222222"
)

// openseaAPI speaks the OpenSea API v2 paths the Wallet uses, shaped as
// OpenSea answers them; orders' protocol is f.swapTo, so their Seaport
// calls land on an account of the local node.
func (f *fakeServices) openseaAPI(w http.ResponseWriter, r *http.Request, route string) {
	body, _ := io.ReadAll(r.Body)
	f.ask(r, body)
	w.Header().Set("Content-Type", "application/json")
	listing := map[string]any{"order_hash": listingHash, "chain": "ethereum", "protocol_address": f.swapTo, "type": "basic", "status": "ACTIVE",
		"remaining_quantity": 1, "price": map[string]any{"current": map[string]any{"currency": "ETH", "decimals": 18, "value": "10000000000000000"}}}
	zero32 := "0x" + strings.Repeat("0", 64)
	switch route {
	case "chains":
		_, _ = io.WriteString(w, `{"chains":[{"chain":"ethereum","name":"Ethereum"},{"chain":"base","name":"Base"}]}`)
	case "listings/collection/cool-cats/nfts/42/best":
		_ = json.NewEncoder(w).Encode(listing)
	case "listings/collection/cool-cats/best":
		_ = json.NewEncoder(w).Encode(map[string]any{"listings": []any{listing}})
	case "listings/fulfillment_data":
		_ = json.NewEncoder(w).Encode(map[string]any{"protocol": "seaport1.6", "fulfillment_data": map[string]any{"orders": []any{},
			"transaction": map[string]any{"function": "fulfillBasicOrder_efficient_6GL6yc((address,uint256,uint256,address,address,address,uint256,uint256,uint8,uint256,uint256,bytes32,uint256,bytes32,bytes32,uint256,(uint256,address)[],bytes))",
				"chain": 1, "to": f.swapTo, "value": "10000000000000000",
				"input_data": map[string]any{"parameters": map[string]any{
					"considerationToken": "0x0000000000000000000000000000000000000000", "considerationIdentifier": "0", "considerationAmount": "9750000000000000",
					"offerer": f.swapTo, "zone": "0x000056f7000000ece9003ca63978907a00ffd100", "offerToken": "0x1a92f7381b9f03921564a437210bb9396471050c",
					"offerIdentifier": "42", "offerAmount": "1", "basicOrderType": 0, "startTime": "1764547200", "endTime": "1767225600",
					"zoneHash": zero32, "salt": "0x360c6ebe", "offererConduitKey": "0x0000007b02230091a7ed01230072f7006a004d60000000000000000000000000",
					"fulfillerConduitKey": zero32, "totalOriginalAdditionalRecipients": "1",
					"additionalRecipients": []any{map[string]any{"amount": "250000000000000", "recipient": "0x0000a26b00c1f0df003000390027140000faa719"}},
					"signature":            "0x" + strings.Repeat("ab", 65)}}}}})
	case "chain/ethereum/contract/" + f.nft + "/nfts/42":
		_ = json.NewEncoder(w).Encode(map[string]any{"nft": map[string]any{"identifier": "42", "collection": "cool-cats", "contract": f.nft}})
	case "offers/collection/cool-cats/nfts/42/best":
		_ = json.NewEncoder(w).Encode(map[string]any{"order_hash": offerHash, "chain": "ethereum", "protocol_address": f.swapTo,
			"price": map[string]any{"currency": "WETH", "decimals": 18, "value": "5000000000000000"}})
	case "offers/fulfillment_data":
		item := map[string]any{"itemType": 1, "token": "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", "identifierOrCriteria": "0", "startAmount": "5000000000000000", "endAmount": "5000000000000000"}
		_ = json.NewEncoder(w).Encode(map[string]any{"protocol": "seaport1.6", "fulfillment_data": map[string]any{"orders": []any{},
			"transaction": map[string]any{"function": "fulfillAdvancedOrder(((address,address,(uint8,address,uint256,uint256,uint256)[],(uint8,address,uint256,uint256,uint256,address)[],uint8,uint256,uint256,bytes32,uint256,bytes32,uint256),uint120,uint120,bytes,bytes),(uint256,uint8,uint256,uint256,bytes32[])[],bytes32,address)",
				"chain": 1, "to": f.swapTo, "value": "0",
				"input_data": map[string]any{
					"advancedOrder": map[string]any{"parameters": map[string]any{"offerer": f.swapTo, "zone": "0x000056f7000000ece9003ca63978907a00ffd100",
						"offer": []any{item}, "consideration": []any{map[string]any{"itemType": 4, "token": f.nft, "identifierOrCriteria": "0", "startAmount": "1", "endAmount": "1", "recipient": f.swapTo}},
						"orderType": 2, "startTime": "1764547200", "endTime": "1767225600", "zoneHash": zero32, "salt": "12345",
						"conduitKey": "0x0000007b02230091a7ed01230072f7006a004d60000000000000000000000000", "totalOriginalConsiderationItems": "1"},
						"numerator": 1, "denominator": 1, "signature": "0x" + strings.Repeat("cd", 65), "extraData": "0x"},
					"criteriaResolvers":   []any{map[string]any{"orderIndex": "0", "side": 1, "index": "0", "identifier": "42", "criteriaProof": []any{}}},
					"fulfillerConduitKey": "0x0000007b02230091a7ed01230072f7006a004d60000000000000000000000000",
					"recipient":           "0x0000000000000000000000000000000000000000"}}}})
	case "collections/cool-cats":
		_, _ = io.WriteString(w, `{"collection":"cool-cats","fees":[{"fee":2.5,"recipient":"0x0000a26b00c1f0df003000390027140000faa719","required":true},`+
			`{"fee":5,"recipient":"0x1111111111111111111111111111111111111111","required":false}]}`)
	case "orders/ethereum/seaport/listings":
		_, _ = io.WriteString(w, `{"order":{"order_hash":"0x3333333333333333333333333333333333333333333333333333333333333333"}}`)
	case "offers/build":
		var in struct {
			Offerer string `json:"offerer"`
		}
		_ = json.Unmarshal(body, &in)
		_ = json.NewEncoder(w).Encode(map[string]any{"partialParameters": map[string]any{
			"consideration": []any{map[string]any{"itemType": 4, "token": f.nft, "identifierOrCriteria": "0", "startAmount": "1", "endAmount": "1", "recipient": in.Offerer}},
			"zone":          "0x000056f7000000ece9003ca63978907a00ffd100", "zoneHash": "0x" + strings.Repeat("0", 64)},
			"criteria": map[string]any{"collection": map[string]any{"slug": "cool-cats"}, "contract": map[string]any{"address": f.nft}}})
	case "offers":
		_, _ = io.WriteString(w, `{"order_hash":"0x4444444444444444444444444444444444444444444444444444444444444444","chain":"ethereum"}`)
	case "orders/chain/ethereum/protocol/0x0000000000000068F116a894984e2DB1123eB395/" + listingHash + "/cancel":
		_, _ = io.WriteString(w, `{"last_signature_issued_valid_until":"2026-12-01T14:00:00Z"}`)
	default:
		http.Error(w, `{"errors":["not found"]}`, http.StatusNotFound)
	}
}
