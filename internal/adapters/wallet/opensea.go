package wallet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// Seaport 1.6 (the protocol OpenSea's orders use) and OpenSea's conduit,
// which moves an NFT whose offer is accepted.
var (
	seaport16      = common.HexToAddress("0x0000000000000068F116a894984e2DB1123eB395")
	openseaConduit = common.HexToAddress("0x1E0049783F008A0085193E00003D00cd54003c71")
)

var (
	selIsApprovedForAll  = []byte{0xe9, 0x85, 0xe9, 0xc5}
	selSetApprovalForAll = []byte{0xa2, 0x2c, 0xb4, 0x65}
)

// openseaChain is the chain as OpenSea's paths name it.
func openseaChain(ch chain) string { return ch.name }

func (c *call) opensea(ctx context.Context, method, path string, body any, out any) error {
	var r *bytes.Reader
	h := openseaHeader(c.keys)
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
		h.Set("Content-Type", "application/json")
	}
	var err error
	if r != nil {
		err = c.conn.DoJSON(ctx, method, c.ep.service("opensea", openseaURL), path, nil, h, r, out)
	} else {
		err = c.conn.DoJSON(ctx, method, c.ep.service("opensea", openseaURL), path, nil, h, nil, out)
	}
	if err != nil {
		return fmt.Errorf("OpenSea %s: %w", strings.SplitN(path, "?", 2)[0], err)
	}
	return nil
}

// order is a listing or an offer as OpenSea's best-order answers show it.
type order struct {
	OrderHash       string `json:"order_hash"`
	Chain           string `json:"chain"`
	ProtocolAddress string `json:"protocol_address"`
	Price           struct {
		Current *price `json:"current"`
		price
	} `json:"price"`
}

type price struct {
	Currency string `json:"currency"`
	Decimals int    `json:"decimals"`
	Value    string `json:"value"`
}

func (o order) amount() (*big.Int, price, bool) {
	p := o.Price.price
	if o.Price.Current != nil {
		p = *o.Price.Current
	}
	v, ok := new(big.Int).SetString(p.Value, 10)
	return v, p, ok && p.Decimals >= 0 && p.Decimals <= 77
}

// fulfilment is OpenSea's fulfilment data: a Seaport call to make.
type fulfilment struct {
	FulfillmentData struct {
		Transaction struct {
			Function  string          `json:"function"`
			Chain     int64           `json:"chain"`
			To        string          `json:"to"`
			Value     json.RawMessage `json:"value"`
			InputData json.RawMessage `json:"input_data"`
		} `json:"transaction"`
	} `json:"fulfillment_data"`
}

// seaportPlan checks OpenSea's fulfilment against the order and the chain,
// and packs its calldata.
func (f fulfilment) plan(chainID *big.Int, o order) (common.Address, *big.Int, []byte, error) {
	tx := f.FulfillmentData.Transaction
	to, err := address("OpenSea's transaction to", tx.To)
	if err != nil {
		return common.Address{}, nil, nil, err
	}
	if protocol := common.HexToAddress(o.ProtocolAddress); to != protocol {
		return common.Address{}, nil, nil, fmt.Errorf("OpenSea's transaction goes to %s, not the order's protocol %s: nothing was signed", to.Hex(), protocol.Hex())
	}
	if tx.Chain != 0 && big.NewInt(tx.Chain).Cmp(chainID) != 0 {
		return common.Address{}, nil, nil, fmt.Errorf("OpenSea's transaction is for chain %d, not %s: nothing was signed", tx.Chain, chainID)
	}
	value, ok := jsonUint(tx.Value)
	if !ok {
		value = new(big.Int)
		if v := strings.Trim(string(tx.Value), `" `); v != "" && v != "null" {
			return common.Address{}, nil, nil, fmt.Errorf("OpenSea's transaction value %s is not a number", tx.Value)
		}
	}
	data, err := seaportCalldata(tx.Function, tx.InputData)
	return to, value, data, err
}

func tokenIDArg(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if n, ok := new(big.Int).SetString(s, 10); !ok || n.Sign() < 0 {
		return "", fmt.Errorf("token_id %q is not a token id (a decimal number)", s)
	}
	return s, nil
}

func slugArg(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 200 || strings.ContainsAny(s, "/?#% \t\n") {
		return "", fmt.Errorf("collection %q is not an OpenSea collection slug", s)
	}
	return s, nil
}

// openseaBuy buys a listed NFT (token_id given) or the collection's floor:
// OpenSea's best listing, its fulfilment data, then the Seaport call paid
// in the native coin.
func openseaBuy(ctx context.Context, c *call, in args) (string, error) {
	ch, err := evmChain(in.Chain)
	if err != nil {
		return "", err
	}
	slug, err := slugArg(in.Collection)
	if err != nil {
		return "", err
	}
	id, err := tokenIDArg(in.TokenID)
	if err != nil {
		return "", err
	}
	var best order
	if id != "" {
		err = c.opensea(ctx, http.MethodGet, "/listings/collection/"+url.PathEscape(slug)+"/nfts/"+id+"/best", nil, &best)
	} else {
		var page struct {
			Listings []order `json:"listings"`
		}
		err = c.opensea(ctx, http.MethodGet, "/listings/collection/"+url.PathEscape(slug)+"/best?limit=1", nil, &page)
		if err == nil && len(page.Listings) == 0 {
			return "", fmt.Errorf("collection %s has no listing to buy", slug)
		}
		if err == nil {
			best = page.Listings[0]
		}
	}
	if err != nil {
		return "", err
	}
	cost, p, ok := best.amount()
	if !ok || best.OrderHash == "" {
		return "", errors.New("OpenSea's best listing has no order hash or price")
	}
	if !strings.EqualFold(p.Currency, ch.symbol) || p.Decimals != nativeDecimals {
		return "", fmt.Errorf("the best listing is priced in %s; opensea_buy pays in %s only: nothing was signed", p.Currency, ch.symbol)
	}
	e := c.evm(ch)
	chainID, err := e.chainID(ctx)
	if err != nil {
		return "", err
	}
	var f fulfilment
	if err := c.opensea(ctx, http.MethodPost, "/listings/fulfillment_data", map[string]any{
		"listing":   map[string]string{"hash": best.OrderHash, "chain": openseaChain(ch), "protocol_address": best.ProtocolAddress},
		"fulfiller": map[string]string{"address": c.keys.evmAddr.Hex()}}, &f); err != nil {
		return "", err
	}
	to, value, data, err := f.plan(chainID, best)
	if err != nil {
		return "", err
	}
	if value.Cmp(cost) != 0 {
		return "", fmt.Errorf("OpenSea's transaction pays %s wei, not the listing's %s: nothing was signed", value, cost)
	}
	what := "the floor of " + slug
	if id != "" {
		what = slug + " #" + id
	}
	return e.execute(ctx, plan{to: to, value: value, data: data, what: []string{"chain: " + ch.name, "from: " + c.keys.evmAddr.Hex(),
		"to: " + to.Hex() + " (Seaport, order " + best.OrderHash + ")", "buys: " + what,
		"amount: " + formatUnits(cost, nativeDecimals) + " " + ch.symbol}})
}

// openseaAcceptOffer sells an NFT into its best offer: the collection from
// OpenSea's NFT answer, the best offer, the conduit's approval when it is
// missing, then the Seaport call.
func openseaAcceptOffer(ctx context.Context, c *call, in args) (string, error) {
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
	var best order
	if err := c.opensea(ctx, http.MethodGet, "/offers/collection/"+url.PathEscape(slug)+"/nfts/"+id+"/best", nil, &best); err != nil {
		return "", err
	}
	got, p, ok := best.amount()
	if !ok || best.OrderHash == "" {
		return "", errors.New("OpenSea's best offer has no order hash or price")
	}
	e := c.evm(ch)
	chainID, err := e.chainID(ctx)
	if err != nil {
		return "", err
	}
	var lines []string
	if out, ok, err := e.approveConduitForNFTs(ctx, contract); err != nil || !ok {
		return out, err
	} else if out != "" {
		lines = append(lines, out, "")
	}
	var f fulfilment
	if err := c.opensea(ctx, http.MethodPost, "/offers/fulfillment_data", map[string]any{
		"offer":         map[string]string{"hash": best.OrderHash, "chain": openseaChain(ch), "protocol_address": best.ProtocolAddress},
		"fulfiller":     map[string]string{"address": c.keys.evmAddr.Hex()},
		"consideration": map[string]string{"asset_contract_address": contract.Hex(), "token_id": id}}, &f); err != nil {
		return "", err
	}
	to, value, data, err := f.plan(chainID, best)
	if err != nil {
		return "", err
	}
	if value.Sign() != 0 {
		return "", errors.New("OpenSea's transaction for accepting an offer pays native coin: nothing was signed")
	}
	out, err := e.execute(ctx, plan{to: to, value: value, data: data, what: []string{"chain: " + ch.name, "from: " + c.keys.evmAddr.Hex(),
		"to: " + to.Hex() + " (Seaport, order " + best.OrderHash + ")", "sells: " + contract.Hex() + " #" + id + " (" + slug + ")",
		"amount: 0 " + ch.symbol, "receives: " + formatUnits(got, p.Decimals) + " " + p.Currency + " (before fees)"}})
	if err != nil {
		return "", err
	}
	return strings.Join(append(lines, out), "\n"), nil
}

// openseaCancelOrder cancels an order offchain through OpenSea (orders
// under OpenSea's signed zone); nothing is signed or sent onchain.
func openseaCancelOrder(ctx context.Context, c *call, in args) (string, error) {
	ch, err := evmChain(in.Chain)
	if err != nil {
		return "", err
	}
	h := strings.TrimSpace(in.OrderHash)
	if b, err := calldata(h); err != nil || len(b) != 32 {
		return "", fmt.Errorf("order_hash %q is not an order hash (0x and 64 hex digits)", in.OrderHash)
	}
	var ans struct {
		Until string `json:"last_signature_issued_valid_until"`
	}
	if err := c.opensea(ctx, http.MethodPost, "/orders/chain/"+openseaChain(ch)+"/protocol/"+seaport16.Hex()+"/"+strings.ToLower(h)+"/cancel", map[string]any{}, &ans); err != nil {
		return "", err
	}
	out := []string{"chain: " + ch.name, "from: " + c.keys.evmAddr.Hex(), "cancelled: order " + strings.ToLower(h) + " (offchain, through OpenSea)", "fee: none"}
	if ans.Until != "" {
		out = append(out, "last fulfilment signature valid until: "+ans.Until)
	}
	return strings.Join(out, "\n"), nil
}
