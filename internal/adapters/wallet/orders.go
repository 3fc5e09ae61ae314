package wallet

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// Seaport orders the wallet signs (EIP-712, go-ethereum's apitypes) and
// OpenSea stores: a listing of one NFT, a collection offer paid in WETH.
// Both are restricted to OpenSea's signed zone, as OpenSea's own orders on
// Seaport 1.6 are, and move through OpenSea's conduit.
var (
	openseaSignedZone  = common.HexToAddress("0x000056f7000000ece9003ca63978907a00ffd100")
	openseaConduitKey  = common.HexToHash("0x0000007b02230091a7ed01230072f7006a004d60000000000000000000000000")
	selGetCounter      = []byte{0xf0, 0x7e, 0xc3, 0x73}
	listingDuration    = 30 * 24 * time.Hour
	offerDuration      = 7 * 24 * time.Hour
	orderFullRestrictd = 2
)

// weth is the wrapped native coin a collection offer is paid in.
var weth = map[string]common.Address{
	"ethereum": common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"),
	"base":     common.HexToAddress("0x4200000000000000000000000000000000000006"),
	"optimism": common.HexToAddress("0x4200000000000000000000000000000000000006"),
	"arbitrum": common.HexToAddress("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"),
	"polygon":  common.HexToAddress("0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619"),
}

// item is a Seaport offer or consideration item.
type item struct {
	ItemType             int             `json:"itemType"`
	Token                common.Address  `json:"token"`
	IdentifierOrCriteria string          `json:"identifierOrCriteria"`
	StartAmount          string          `json:"startAmount"`
	EndAmount            string          `json:"endAmount"`
	Recipient            *common.Address `json:"recipient,omitempty"`
}

func (it item) message() map[string]any {
	m := map[string]any{"itemType": fmt.Sprint(it.ItemType), "token": it.Token.Hex(), "identifierOrCriteria": it.IdentifierOrCriteria,
		"startAmount": it.StartAmount, "endAmount": it.EndAmount}
	if it.Recipient != nil {
		m["recipient"] = it.Recipient.Hex()
	}
	return m
}

// components are Seaport's OrderComponents, as signed and as posted.
type components struct {
	Offerer                         common.Address `json:"offerer"`
	Zone                            common.Address `json:"zone"`
	Offer                           []item         `json:"offer"`
	Consideration                   []item         `json:"consideration"`
	OrderType                       int            `json:"orderType"`
	StartTime                       string         `json:"startTime"`
	EndTime                         string         `json:"endTime"`
	ZoneHash                        common.Hash    `json:"zoneHash"`
	Salt                            string         `json:"salt"`
	ConduitKey                      common.Hash    `json:"conduitKey"`
	Counter                         string         `json:"counter"`
	TotalOriginalConsiderationItems int            `json:"totalOriginalConsiderationItems"`
}

// seaportTypedData is the EIP-712 typed data of a posted order for a chain.
func seaportTypedData(chainID *big.Int, c json.RawMessage) (apitypes.TypedData, error) {
	var o components
	if err := json.Unmarshal(c, &o); err != nil {
		return apitypes.TypedData{}, err
	}
	return o.typedData(chainID), nil
}

func (o components) typedData(chainID *big.Int) apitypes.TypedData {
	items := func(list []item) []any {
		out := make([]any, len(list))
		for i, it := range list {
			out[i] = it.message()
		}
		return out
	}
	itemFields := []apitypes.Type{{Name: "itemType", Type: "uint8"}, {Name: "token", Type: "address"},
		{Name: "identifierOrCriteria", Type: "uint256"}, {Name: "startAmount", Type: "uint256"}, {Name: "endAmount", Type: "uint256"}}
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {{Name: "name", Type: "string"}, {Name: "version", Type: "string"}, {Name: "chainId", Type: "uint256"},
				{Name: "verifyingContract", Type: "address"}},
			"OrderComponents": {{Name: "offerer", Type: "address"}, {Name: "zone", Type: "address"}, {Name: "offer", Type: "OfferItem[]"},
				{Name: "consideration", Type: "ConsiderationItem[]"}, {Name: "orderType", Type: "uint8"}, {Name: "startTime", Type: "uint256"},
				{Name: "endTime", Type: "uint256"}, {Name: "zoneHash", Type: "bytes32"}, {Name: "salt", Type: "uint256"},
				{Name: "conduitKey", Type: "bytes32"}, {Name: "counter", Type: "uint256"}},
			"OfferItem":         itemFields,
			"ConsiderationItem": append(append([]apitypes.Type{}, itemFields...), apitypes.Type{Name: "recipient", Type: "address"}),
		},
		PrimaryType: "OrderComponents",
		Domain: apitypes.TypedDataDomain{Name: "Seaport", Version: "1.6", ChainId: (*math.HexOrDecimal256)(chainID),
			VerifyingContract: seaport16.Hex()},
		Message: map[string]any{"offerer": o.Offerer.Hex(), "zone": o.Zone.Hex(), "offer": items(o.Offer), "consideration": items(o.Consideration),
			"orderType": fmt.Sprint(o.OrderType), "startTime": o.StartTime, "endTime": o.EndTime, "zoneHash": o.ZoneHash.Hex(),
			"salt": o.Salt, "conduitKey": o.ConduitKey.Hex(), "counter": o.Counter},
	}
}

// sign signs the order's EIP-712 hash with the wallet's key (v is 27 or 28).
func (o components) sign(e *evm, chainID *big.Int) (string, error) {
	hash, _, err := apitypes.TypedDataAndHash(o.typedData(chainID))
	if err != nil {
		return "", fmt.Errorf("hashing the order: %w", err)
	}
	sig, err := crypto.Sign(hash, e.keys.evm)
	if err != nil {
		return "", err
	}
	sig[64] += 27
	return hexutil.Encode(sig), nil
}

// newOrder starts an order of the wallet on Seaport 1.6: its counter read
// from Seaport, a random salt, OpenSea's zone and conduit, from now for d.
func (e *evm) newOrder(ctx context.Context, d time.Duration, now time.Time) (components, error) {
	raw, err := e.ethCall(ctx, seaport16, append(append([]byte{}, selGetCounter...), word(e.keys.evmAddr.Bytes())...))
	if err != nil || len(raw) != 32 {
		return components{}, fmt.Errorf("reading the wallet's Seaport counter on %s: %v", e.ch.name, err)
	}
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return components{}, err
	}
	return components{Offerer: e.keys.evmAddr, Zone: openseaSignedZone, OrderType: orderFullRestrictd,
		StartTime: fmt.Sprint(now.Unix()), EndTime: fmt.Sprint(now.Add(d).Unix()), ConduitKey: openseaConduitKey,
		Salt: new(big.Int).SetBytes(salt).String(), Counter: new(big.Int).SetBytes(raw).String()}, nil
}

// fee is a collection's required fee, in basis points.
type fee struct {
	bps       *big.Int
	recipient common.Address
}

// collectionFees reads the fees OpenSea requires on a collection's orders.
func (c *call) collectionFees(ctx context.Context, slug string) ([]fee, error) {
	var col struct {
		Fees []struct {
			Fee       json.Number `json:"fee"`
			Recipient string      `json:"recipient"`
			Required  bool        `json:"required"`
		} `json:"fees"`
	}
	if err := c.opensea(ctx, http.MethodGet, "/collections/"+url.PathEscape(slug), nil, &col); err != nil {
		return nil, err
	}
	var out []fee
	for _, f := range col.Fees {
		if !f.Required {
			continue
		}
		bps, err := parseAmount("fee", f.Fee.String(), 2) // a percent with two decimals at most: basis points
		if err != nil || !common.IsHexAddress(f.Recipient) || bps.Cmp(big.NewInt(10000)) > 0 {
			return nil, fmt.Errorf("OpenSea's fee %q to %q for %s is not a percent and an address", f.Fee, f.Recipient, slug)
		}
		out = append(out, fee{bps: bps, recipient: common.HexToAddress(f.Recipient)})
	}
	return out, nil
}

// split takes the fees out of a price: each fee's part, rounded down, and
// what is left.
func split(price *big.Int, fees []fee) ([]*big.Int, *big.Int) {
	rest := new(big.Int).Set(price)
	parts := make([]*big.Int, len(fees))
	for i, f := range fees {
		parts[i] = new(big.Int).Div(new(big.Int).Mul(price, f.bps), big.NewInt(10000))
		rest.Sub(rest, parts[i])
	}
	return parts, rest
}

func feeLines(fees []fee, parts []*big.Int, symbol string) string {
	if len(fees) == 0 {
		return "fees: none required"
	}
	var s []string
	for i, f := range fees {
		s = append(s, fmt.Sprintf("%s %s (%s%%) to %s", formatUnits(parts[i], nativeDecimals), symbol, formatUnits(f.bps, 2), f.recipient.Hex()))
	}
	return "fees: " + strings.Join(s, ", ")
}

// openseaList lists an NFT for sale at a price in the native coin: the
// conduit's approval when missing (onchain), then a signed Seaport order
// posted to OpenSea (no gas).
func openseaList(ctx context.Context, c *call, in args) (string, error) {
	ch, err := evmChain(in.Chain)
	if err != nil {
		return "", err
	}
	contract, err := address("contract", in.Contract)
	if err != nil {
		return "", err
	}
	id, err := tokenIDArg(in.TokenID)
	if err != nil || id == "" {
		return "", errors.Join(err, errors.New("token_id is required"))
	}
	price, err := positive("price", in.Price, nativeDecimals)
	if err != nil {
		return "", err
	}
	var nft struct {
		NFT struct {
			Collection string `json:"collection"`
		} `json:"nft"`
	}
	if err := c.opensea(ctx, http.MethodGet, "/chain/"+openseaChain(ch)+"/contract/"+contract.Hex()+"/nfts/"+id, nil, &nft); err != nil {
		return "", err
	}
	slug, err := slugArg(nft.NFT.Collection)
	if err != nil {
		return "", fmt.Errorf("OpenSea names no collection for %s #%s", contract.Hex(), id)
	}
	fees, err := c.collectionFees(ctx, slug)
	if err != nil {
		return "", err
	}
	parts, proceeds := split(price, fees)
	if proceeds.Sign() <= 0 {
		return "", errors.New("the collection's fees take the whole price")
	}
	e := c.evm(ch)
	chainID, err := e.chainID(ctx)
	if err != nil {
		return "", err
	}
	var lines []string
	if out, ok, err := e.approveConduitForNFTs(ctx, contract); err != nil || !ok {
		return strings.Join(append(lines, out), "\n"), err
	} else if out != "" {
		lines = append(lines, out, "")
	}
	o, err := e.newOrder(ctx, listingDuration, time.Now())
	if err != nil {
		return "", err
	}
	seller := e.keys.evmAddr
	o.Offer = []item{{ItemType: 2, Token: contract, IdentifierOrCriteria: id, StartAmount: "1", EndAmount: "1"}}
	o.Consideration = []item{{ItemType: 0, IdentifierOrCriteria: "0", StartAmount: proceeds.String(), EndAmount: proceeds.String(), Recipient: &seller}}
	for i, f := range fees {
		r := f.recipient
		o.Consideration = append(o.Consideration, item{ItemType: 0, IdentifierOrCriteria: "0", StartAmount: parts[i].String(), EndAmount: parts[i].String(), Recipient: &r})
	}
	o.TotalOriginalConsiderationItems = len(o.Consideration)
	sig, err := o.sign(e, chainID)
	if err != nil {
		return "", err
	}
	var ans struct {
		Order struct {
			OrderHash string `json:"order_hash"`
		} `json:"order"`
	}
	if err := c.opensea(ctx, http.MethodPost, "/orders/"+openseaChain(ch)+"/seaport/listings", map[string]any{
		"parameters": o, "signature": sig, "protocol_address": seaport16.Hex()}, &ans); err != nil {
		return "", err
	}
	return strings.Join(append(lines, "chain: "+ch.name, "from: "+seller.Hex(), "to: OpenSea (a signed Seaport listing, no gas)",
		"lists: "+contract.Hex()+" #"+id+" ("+slug+")", "amount: "+formatUnits(price, nativeDecimals)+" "+ch.symbol+
			" (proceeds "+formatUnits(proceeds, nativeDecimals)+")", feeLines(fees, parts, ch.symbol),
		"expires: "+time.Unix(mustInt(o.EndTime), 0).UTC().Format(time.RFC3339), "order_hash: "+ans.Order.OrderHash), "\n"), nil
}

func mustInt(s string) int64 {
	n, _ := new(big.Int).SetString(s, 10)
	if n == nil || !n.IsInt64() {
		return 0
	}
	return n.Int64()
}

// approveConduitForNFTs sends setApprovalForAll(conduit) when the contract
// does not already approve it; ok is false when that approval is not
// confirmed (the caller stops).
func (e *evm) approveConduitForNFTs(ctx context.Context, contract common.Address) (string, bool, error) {
	approved, _ := e.ethCall(ctx, contract, append(append(append([]byte{}, selIsApprovedForAll...), word(e.keys.evmAddr.Bytes())...), word(openseaConduit.Bytes())...))
	if len(approved) == 32 && new(big.Int).SetBytes(approved).Sign() != 0 {
		return "", true, nil
	}
	data := append(append(append([]byte{}, selSetApprovalForAll...), word(openseaConduit.Bytes())...), word([]byte{1})...)
	out, err := e.execute(ctx, plan{to: contract, value: new(big.Int), data: data,
		what: []string{"approval: OpenSea's conduit " + openseaConduit.Hex() + " for every NFT of " + contract.Hex()}})
	if err != nil {
		return "", false, fmt.Errorf("approving OpenSea's conduit: %w", err)
	}
	if !strings.Contains(out, "status: confirmed") {
		return out + "\nthe approval is not confirmed yet, so nothing more was done: check its tx_hash and try again", false, nil
	}
	return out, true, nil
}

// openseaCollectionOffer places a bid on any NFT of a collection, paid in
// WETH: OpenSea builds the criteria, the conduit's WETH allowance is raised
// when short (onchain), then a signed Seaport order is posted (no gas).
func openseaCollectionOffer(ctx context.Context, c *call, in args) (string, error) {
	ch, err := evmChain(in.Chain)
	if err != nil {
		return "", err
	}
	pay, ok := weth[ch.name]
	if !ok {
		return "", fmt.Errorf("opensea_collection_offer pays in WETH, which it knows on ethereum, base, optimism, arbitrum and polygon, not %s", ch.name)
	}
	slug, err := slugArg(in.Collection)
	if err != nil {
		return "", err
	}
	price, err := positive("price", in.Price, nativeDecimals)
	if err != nil {
		return "", err
	}
	fees, err := c.collectionFees(ctx, slug)
	if err != nil {
		return "", err
	}
	parts, _ := split(price, fees)
	var built struct {
		Partial struct {
			Consideration []item         `json:"consideration"`
			Zone          common.Address `json:"zone"`
			ZoneHash      common.Hash    `json:"zoneHash"`
		} `json:"partialParameters"`
		Criteria json.RawMessage `json:"criteria"`
	}
	if err := c.opensea(ctx, http.MethodPost, "/offers/build", map[string]any{"offerer": c.keys.evmAddr.Hex(), "quantity": 1,
		"criteria": map[string]any{"collection": map[string]string{"slug": slug}}, "protocol_address": seaport16.Hex()}, &built); err != nil {
		return "", err
	}
	if len(built.Partial.Consideration) != 1 || built.Partial.Consideration[0].Recipient == nil || *built.Partial.Consideration[0].Recipient != c.keys.evmAddr {
		return "", errors.New("OpenSea's built offer does not send the NFT to the wallet: nothing was signed")
	}
	e := c.evm(ch)
	chainID, err := e.chainID(ctx)
	if err != nil {
		return "", err
	}
	var lines []string
	out, err := e.approve(ctx, pay, openseaConduit, price, formatUnits(price, nativeDecimals)+" WETH")
	if out != "" {
		lines = append(lines, out, "")
	}
	if err != nil {
		return strings.Join(append(lines, err.Error()), "\n"), nil
	}
	o, err := e.newOrder(ctx, offerDuration, time.Now())
	if err != nil {
		return "", err
	}
	o.Zone, o.ZoneHash = built.Partial.Zone, built.Partial.ZoneHash
	o.Offer = []item{{ItemType: 1, Token: pay, IdentifierOrCriteria: "0", StartAmount: price.String(), EndAmount: price.String()}}
	o.Consideration = append([]item{}, built.Partial.Consideration...)
	for i, f := range fees {
		r := f.recipient
		o.Consideration = append(o.Consideration, item{ItemType: 1, Token: pay, IdentifierOrCriteria: "0", StartAmount: parts[i].String(), EndAmount: parts[i].String(), Recipient: &r})
	}
	o.TotalOriginalConsiderationItems = len(o.Consideration)
	sig, err := o.sign(e, chainID)
	if err != nil {
		return "", err
	}
	var ans struct {
		OrderHash string `json:"order_hash"`
	}
	if err := c.opensea(ctx, http.MethodPost, "/offers", map[string]any{"criteria": built.Criteria,
		"protocol_data": map[string]any{"parameters": o, "signature": sig}, "protocol_address": seaport16.Hex()}, &ans); err != nil {
		return "", err
	}
	return strings.Join(append(lines, "chain: "+ch.name, "from: "+c.keys.evmAddr.Hex(), "to: OpenSea (a signed Seaport offer, no gas)",
		"bids on: any NFT of "+slug, "amount: "+formatUnits(price, nativeDecimals)+" WETH", feeLines(fees, parts, "WETH")+" (paid out of the bid)",
		"expires: "+time.Unix(mustInt(o.EndTime), 0).UTC().Format(time.RFC3339), "order_hash: "+ans.OrderHash), "\n"), nil
}
