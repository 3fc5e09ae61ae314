package alchemy_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/alchemy"
	"github.com/guilds/guilds/internal/connectors"
)

// catalogURL is the manifest's URL: the adapter derives every chain's host
// from it, and the fake's client routes them all to one server.
const catalogURL = "https://eth-mainnet.g.alchemy.com/nft/v3"

type fixture struct {
	svc *service
	a   alchemy.Adapter
}

func newFixture(t testing.TB) fixture { return fixture{svc: newService(t, true)} }

func (f fixture) conn(key string) adapters.Conn {
	return adapters.Conn{HTTP: f.svc.client(), BaseURL: catalogURL, Cred: connectors.Credential{AccessToken: key}}
}

// call runs a tool and fails the test if the key leaks into its answer.
func (f fixture) call(t *testing.T, tool, args string) (string, error) {
	t.Helper()
	out, err := f.a.Call(context.Background(), f.conn(goodKey), tool, json.RawMessage(args))
	noKey(t, out, err, goodKey)
	return out, err
}

func noKey(t testing.TB, out string, err error, key string) {
	t.Helper()
	if strings.Contains(out, key) || (err != nil && strings.Contains(err.Error(), key)) {
		t.Fatalf("the key leaked: %q %v", out, err)
	}
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestRegistered(t *testing.T) {
	a, ok := adapters.Lookup("alchemy")
	if !ok || a.Name() != "alchemy" {
		t.Fatalf("not registered: %v", adapters.Registered())
	}
}

func TestCheck(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	hint, err := f.a.Check(ctx, f.conn(goodKey))
	if err != nil || hint != "" {
		t.Fatalf("good key: %q %v", hint, err)
	}
	got := f.svc.last()
	if got.Host != "eth-mainnet.g.alchemy.com" || got.Path != "/nft/v3/"+goodKey+"/getNFTsForOwner" ||
		got.Query.Get("owner") != "0x0000000000000000000000000000000000000000" {
		t.Fatalf("check sent %s %s?%s", got.Host, got.Path, got.Query.Encode())
	}
	for name, key := range map[string]string{
		"unknown key":     "alcht_wrongKey0002",
		"empty":           "  ",
		"path injection":  "abc/../../v2/x",
		"query injection": "abcdefgh?owner=1",
	} {
		before := f.svc.count()
		hint, err := f.a.Check(ctx, f.conn(key))
		if !errors.Is(err, adapters.ErrRejected) || hint != "" {
			t.Errorf("%s: %q %v", name, hint, err)
		}
		if name != "unknown key" && f.svc.count() != before {
			t.Errorf("%s: a malformed key was sent", name)
		}
		noKey(t, hint, err, key)
	}

	down := newService(t, true)
	client := down.client()
	down.Close()
	_, err = f.a.Check(ctx, adapters.Conn{HTTP: client, BaseURL: catalogURL, Cred: connectors.Credential{AccessToken: goodKey}})
	if err == nil || errors.Is(err, adapters.ErrRejected) || !strings.Contains(err.Error(), "could not be reached") {
		t.Fatalf("service down: %v", err)
	}
	noKey(t, "", err, goodKey)
}

func TestHoldings(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, "holdings", `{"owner":"`+ownerAddr+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	rows := lines(out)
	if rows[0] != "contract\ttoken_id\ttype\tbalance\tname\tcollection\tfloor\tacquired\tspam" {
		t.Fatalf("header: %q", rows[0])
	}
	if rows[1] != baycAddr+"\t0\tERC721\t1\tApe #0\tBored Ape Yacht Club\t11.85\t2022-01-02T03:04:05Z\tfalse" {
		t.Fatalf("row: %q", rows[1])
	}
	// 15 rows, a blank line, the total and the next page's key.
	if len(rows) != 19 || rows[16] != "" || rows[17] != "total\t40" || rows[18] != "next_page_key\tpk15" {
		t.Fatalf("%d lines:\n%s", len(rows), out)
	}
	for _, bulk := range []string{"description", "ipfs", "seadn", "cloudinary", "alchemy.com"} {
		if strings.Contains(out, bulk) {
			t.Fatalf("bulk %q kept:\n%s", bulk, out)
		}
	}
	sent := f.svc.last()
	if sent.Host != "eth-mainnet.g.alchemy.com" || sent.Query.Get("pageSize") != "15" || sent.Query.Get("withMetadata") != "true" {
		t.Fatalf("sent %s ?%s", sent.Host, sent.Query.Encode())
	}

	// The next page starts right after the last row shown; the cap is 30.
	out, err = f.call(t, "holdings", `{"owner":"`+ownerAddr+`","page_key":"pk15","limit":100}`)
	if err != nil {
		t.Fatal(err)
	}
	rows = lines(out)
	if len(rows) != 1+25+2 || !strings.HasPrefix(rows[1], baycAddr+"\t15\t") || strings.Contains(out, "next_page_key") {
		t.Fatalf("second page, %d lines:\n%s", len(rows), out)
	}
	if q := f.svc.last().Query; q.Get("pageKey") != "pk15" || q.Get("pageSize") != "30" {
		t.Fatalf("second page sent ?%s", q.Encode())
	}

	out, err = f.call(t, "holdings", `{"owner":"vitalik.eth","contract":"0x0000000000000000000000000000000000000001","limit":3}`)
	if err != nil || out != "contract\ttoken_id\ttype\tbalance\tname\tcollection\tfloor\tacquired\tspam\n\ntotal\t0\n" {
		t.Fatalf("filtered: %q %v", out, err)
	}
	if q := f.svc.last().Query; q.Get("contractAddresses[]") != "0x0000000000000000000000000000000000000001" || q.Get("owner") != "vitalik.eth" {
		t.Fatalf("filter sent ?%s", q.Encode())
	}
}

func TestHoldingsOnOtherChains(t *testing.T) {
	f := newFixture(t)
	for chain, host := range map[string]string{
		"polygon": "polygon-mainnet", "base": "base-mainnet", "arbitrum": "arb-mainnet", "bsc": "bnb-mainnet",
		"optimism": "opt-mainnet", "robinhood": "robinhood-mainnet", "Arb": "arb-mainnet", "": "eth-mainnet",
	} {
		if _, err := f.call(t, "holdings", `{"owner":"`+ownerAddr+`","chain":"`+chain+`","limit":1}`); err != nil {
			t.Fatalf("%s: %v", chain, err)
		}
		if got := f.svc.last(); got.Host != host+".g.alchemy.com" || got.Path != "/nft/v3/"+goodKey+"/getNFTsForOwner" {
			t.Fatalf("%s went to %s%s", chain, got.Host, got.Path)
		}
	}

	before := f.svc.count()
	for args, want := range map[string]string{
		`{"owner":"` + ownerAddr + `","chain":"dogechain"}`:            "unknown chain",
		`{"owner":"vitalik.eth","chain":"base"}`:                       "ENS names resolve on ethereum only",
		`{"owner":"not an address"}`:                                   "not an EVM address or ENS name",
		`{"owner":"` + ownerAddr + `","contract":"0x12"}`:              "not an EVM address",
		`{"owner":"` + ownerAddr + `","page_key":"a&b=c"}`:             "page_key",
		`{"owner":"` + solOwner + `","chain":"solana","contract":"x"}`: "EVM chains only",
	} {
		if _, err := f.call(t, "holdings", args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	if f.svc.count() != before {
		t.Fatal("a bad argument reached the service")
	}

	// A network the key's app has switched off is not a refused key.
	_, err := f.call(t, "holdings", `{"owner":"`+ownerAddr+`","chain":"ink"}`)
	var he *adapters.HTTPError
	if err == nil || errors.As(err, &he) || !strings.Contains(err.Error(), "does not have ink enabled") {
		t.Fatalf("ink: %v", err)
	}

	// An error body quoting the request path has the key taken out, and stays
	// an HTTP error.
	_, err = f.call(t, "holdings", `{"owner":"0x0000000000000000000000000000000000000002"}`)
	if !errors.As(err, &he) || he.Status != 400 || !strings.Contains(err.Error(), "/nft/v3/[key]/getNFTsForOwner") {
		t.Fatalf("echoed path: %v", err)
	}
}

func TestSolanaHoldings(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, "holdings", `{"owner":"`+solOwner+`","chain":"sol","limit":20}`)
	if err != nil {
		t.Fatal(err)
	}
	rows := lines(out)
	if rows[0] != "asset\tinterface\tname\tsymbol\tcollection\tcompressed" ||
		rows[1] != "Asset0000000000000000000000000000000000000000\tV1_NFT\tMad Lad #0\tMAD\tJ1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w\tfalse" {
		t.Fatalf("table:\n%s", out)
	}
	if len(rows) != 23 || rows[22] != "next_page_key\t2" || strings.Contains(out, "arweave") || strings.Contains(out, "drop me") {
		t.Fatalf("%d lines:\n%s", len(rows), out)
	}
	sent := f.svc.last()
	if sent.Host != "solana-mainnet.g.alchemy.com" || sent.Path != "/v2/"+goodKey || sent.Method != "POST" {
		t.Fatalf("sent %s %s%s", sent.Method, sent.Host, sent.Path)
	}
	var body struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal([]byte(sent.Body), &body); err != nil || body.Method != "getAssetsByOwner" ||
		body.Params["ownerAddress"] != solOwner || body.Params["page"] != 1.0 || body.Params["limit"] != 20.0 {
		t.Fatalf("body %s (%v)", sent.Body, err)
	}

	out, err = f.call(t, "holdings", `{"owner":"`+solOwner+`","chain":"solana","limit":20,"page_key":"3"}`)
	if err != nil || len(lines(out)) != 6 || strings.Contains(out, "next_page_key") {
		t.Fatalf("last page: %v\n%s", err, out)
	}
	_, err = f.call(t, "holdings", `{"owner":"`+solOwner+`","chain":"solana","page_key":"pk15"}`)
	if err == nil || !strings.Contains(err.Error(), "page_key") {
		t.Fatalf("EVM page key on solana: %v", err)
	}
	_, err = f.call(t, "holdings", `{"owner":"11111111111111111111111111111111","chain":"solana"}`)
	if err == nil || !strings.Contains(err.Error(), "-32602") || !strings.Contains(err.Error(), "Invalid owner address") {
		t.Fatalf("JSON-RPC error: %v", err)
	}
}

func TestNFT(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, "nft", `{"contract":"`+baycAddr+`","token_id":"44","chain":"ethereum"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "contract\ttoken_id\ttype\tname\tcollection\tsymbol\tfloor\ttotal_supply\tminted\tupdated\tattributes\n" +
		baycAddr + "\t44\tERC721\tApe #44\tBored Ape Yacht Club\tBAYC\t11.85\t10000\t2021-04-23T00:00:00Z\t2026-09-27T10:12:45.000Z\tBackground=Orange; Fur=Robot; Level=3\n"
	if out != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
	if got := f.svc.last(); got.Path != "/nft/v3/"+goodKey+"/getNFTMetadata" || got.Query.Get("tokenId") != "44" {
		t.Fatalf("sent %s?%s", got.Path, got.Query.Encode())
	}

	_, err = f.call(t, "nft", `{"contract":"0x0000000000000000000000000000000000000003","token_id":"1"}`)
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") || !strings.Contains(err.Error(), "check the chain") {
		t.Fatalf("unknown contract: %v", err)
	}
	if _, err := f.call(t, "nft", `{"contract":"`+baycAddr+`","token_id":"1; drop"}`); err == nil || !strings.Contains(err.Error(), "token_id") {
		t.Fatalf("bad token id: %v", err)
	}

	out, err = f.call(t, "nft", `{"contract":"`+solMint+`","token_id":"0","chain":"solana"}`)
	if err != nil || out != "asset\tinterface\tname\tsymbol\tcollection\towner\tcompressed\tattributes\n"+
		solMint+"\tV1_NFT\tMad Lad #7\tMAD\tJ1S9H3QjnRtBbbuD4HjPV6RpRhwuk4zKbxsnCHuTgh9w\t"+solOwner+"\ttrue\tGender=Male\n" {
		t.Fatalf("solana asset: %v\n%q", err, out)
	}
	if !strings.Contains(f.svc.last().Body, `"method":"getAsset"`) {
		t.Fatalf("solana body: %s", f.svc.last().Body)
	}
}

func TestCollection(t *testing.T) {
	f := newFixture(t)
	out, err := f.call(t, "collection", `{"contract":"`+baycAddr+`","chain":"polygon"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "contract\tname\tcollection\tslug\tsymbol\ttype\ttotal_supply\tfloor\tfloor_seen\tsafelist\tdeployer\tdeployed_block\n" +
		baycAddr + "\tBoredApeYachtClub\tBored Ape Yacht Club\tboredapeyachtclub\tBAYC\tERC721\t10000\t11.85\t2026-09-27T10:12:45.000Z\tverified\t0xaba7161a7fb69c88e16ed9f455ce62b791ee4d03\t12287507\n"
	if out != want {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
	if got := f.svc.last(); got.Host != "polygon-mainnet.g.alchemy.com" || got.Query.Get("contractAddress") != baycAddr {
		t.Fatalf("sent %s ?%s", got.Host, got.Query.Encode())
	}
	if _, err := f.call(t, "collection", `{"contract":"`+solMint+`","chain":"solana"}`); err == nil || !strings.Contains(err.Error(), "EVM chains") {
		t.Fatalf("solana collection: %v", err)
	}
}

func TestCallErrors(t *testing.T) {
	f := newFixture(t)
	if _, err := f.call(t, "floor", `{}`); err == nil || !strings.Contains(err.Error(), `"floor"`) {
		t.Fatalf("unknown tool: %v", err)
	}
	// A key the service no longer accepts stays a refused HTTP error, so the
	// pool tells the operator to connect again.
	bad := "alcht_revokedKey03"
	_, err := f.a.Call(context.Background(), f.conn(bad), "collection", json.RawMessage(`{"contract":"`+baycAddr+`"}`))
	var he *adapters.HTTPError
	if !errors.As(err, &he) || !he.Refused() {
		t.Fatalf("revoked key: %v", err)
	}
	noKey(t, "", err, bad)

	// Unreachable: the client's error quotes the URL, key included.
	down := newService(t, true)
	client := down.client()
	down.Close()
	for _, tool := range []string{"holdings", "nft"} {
		_, err = f.a.Call(context.Background(), adapters.Conn{HTTP: client, BaseURL: catalogURL, Cred: connectors.Credential{AccessToken: goodKey}},
			tool, json.RawMessage(`{"owner":"`+ownerAddr+`","contract":"`+baycAddr+`","token_id":"1"}`))
		if err == nil || !strings.Contains(err.Error(), "[key]") {
			t.Fatalf("%s down: %v", tool, err)
		}
		noKey(t, "", err, goodKey)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = f.a.Call(ctx, f.conn(goodKey), "holdings", json.RawMessage(`{"owner":"`+ownerAddr+`"}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	noKey(t, "", err, goodKey)
}
