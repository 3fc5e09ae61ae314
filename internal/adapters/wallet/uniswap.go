package wallet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// permit2 is Uniswap's Permit2 contract (the same address on every chain);
// a permit sent as a transaction is its approve(token, spender, amount,
// expiration).
var (
	permit2           = common.HexToAddress("0x000000000022D473030F116dDEE9F6B43aC78BA3")
	selPermit2Approve = []byte{0x87, 0x51, 0x7c, 0x45}
)

// uniswapSwap quotes then executes a swap on Uniswap v2/v3/v4 through the
// Trading API: the token's approval (to Permit2) when it is short, then the
// quote (classic routes only, the permit as a transaction), then the swap.
func uniswapSwap(ctx context.Context, c *call, in args) (string, error) {
	if c.keys.uniswap == "" {
		return "", errors.New("the login has no Uniswap API key: connect the Wallet again with one")
	}
	ch, err := evmChain(in.Chain)
	if err != nil {
		return "", err
	}
	if !ch.uniswap {
		return "", fmt.Errorf("uniswap_swap does not run on %s (ethereum, polygon, base, arbitrum, bsc, optimism, ink, robinhood and arc)", ch.name)
	}
	bps, err := slippage(in.Slippage)
	if err != nil {
		return "", err
	}
	if err := decimalShape("amount", in.Amount); err != nil {
		return "", err
	}
	e := c.evm(ch)
	from, fromDec, fromSym, err := e.token(ctx, "from_token", in.FromToken)
	if err != nil {
		return "", err
	}
	to, toDec, toSym, err := e.token(ctx, "to_token", in.ToToken)
	if err != nil {
		return "", err
	}
	amount, err := positive("amount", in.Amount, fromDec)
	if err != nil {
		return "", err
	}
	id, err := e.chainID(ctx)
	if err != nil {
		return "", err
	}
	post := func(path string, body any, out any) error {
		raw, _ := json.Marshal(body)
		h := http.Header{"Content-Type": {"application/json"}, "x-api-key": {c.keys.uniswap}}
		if err := c.conn.DoJSON(ctx, http.MethodPost, c.ep.service("uniswap", uniswapURL), path, nil, h, bytes.NewReader(raw), out); err != nil {
			return fmt.Errorf("the Uniswap %s: %w", strings.TrimPrefix(path, "/"), err)
		}
		return nil
	}
	var lines []string
	run := func(r *txRequest, what string, want common.Address, selector []byte) (bool, error) {
		if r == nil || r.To == "" {
			return true, nil
		}
		target, value, data, err := r.plan("Uniswap's " + what)
		if err != nil {
			return false, err
		}
		// Only the transaction asked for is signed: an approval is approve()
		// on the token sold, a permit goes to Permit2, and neither pays.
		if target != want || len(data) < 4 || !bytes.Equal(data[:4], selector) || value.Sign() != 0 {
			return false, fmt.Errorf("the Uniswap %s is not the transaction expected (to %s): nothing was signed", what, want.Hex())
		}
		out, err := e.execute(ctx, plan{to: target, value: value, data: data, what: []string{what + ": " + target.Hex()}})
		if err != nil {
			return false, fmt.Errorf("%s: %w", what, err)
		}
		lines = append(lines, out, "")
		return strings.Contains(out, "status: confirmed"), nil
	}
	if from != nativeEVM {
		var ap struct {
			Approval *txRequest `json:"approval"`
		}
		if err := post("/check_approval", map[string]any{"walletAddress": c.keys.evmAddr.Hex(), "token": from.Hex(),
			"amount": amount.String(), "chainId": id.Int64()}, &ap); err != nil {
			return "", err
		}
		if ok, err := run(ap.Approval, "approval", from, selApprove); err != nil || !ok {
			return strings.Join(append(lines, errStopAfterApproval.Error()), "\n"), err
		}
	}
	var quote struct {
		Routing           string          `json:"routing"`
		Quote             json.RawMessage `json:"quote"`
		PermitData        json.RawMessage `json:"permitData"`
		PermitTransaction *txRequest      `json:"permitTransaction"`
	}
	if err := post("/quote", map[string]any{"type": "EXACT_INPUT", "amount": amount.String(), "tokenInChainId": id.Int64(),
		"tokenOutChainId": id.Int64(), "tokenIn": from.Hex(), "tokenOut": to.Hex(), "swapper": c.keys.evmAddr.Hex(),
		"slippageTolerance": float64(bps) / 100, "protocols": []string{"V2", "V3", "V4"}, "generatePermitAsTransaction": true}, &quote); err != nil {
		return "", err
	}
	if quote.Routing != "CLASSIC" {
		return "", fmt.Errorf("the Uniswap API answered a %q route, not a v2/v3/v4 pool route: nothing was signed", quote.Routing)
	}
	if p := bytes.TrimSpace(quote.PermitData); len(p) > 0 && string(p) != "null" {
		return "", errors.New("the Uniswap quote needs a Permit2 signature, which this tool does not sign: nothing was signed")
	}
	var terms struct {
		Output struct {
			Amount string `json:"amount"`
		} `json:"output"`
	}
	_ = json.Unmarshal(quote.Quote, &terms)
	expected, ok := new(big.Int).SetString(terms.Output.Amount, 10)
	if !ok {
		return "", errors.New("the Uniswap quote has no output amount")
	}
	if ok, err := run(quote.PermitTransaction, "permit", permit2, selPermit2Approve); err != nil || !ok {
		return strings.Join(append(lines, "the permit is not confirmed yet, so the swap was not sent"), "\n"), err
	}
	var built struct {
		Swap txRequest `json:"swap"`
	}
	if err := post("/swap", map[string]any{"quote": quote.Quote}, &built); err != nil {
		return "", err
	}
	target, value, data, err := built.Swap.plan("Uniswap's swap")
	if err != nil {
		return "", err
	}
	if from == nativeEVM && value.Cmp(amount) != 0 || from != nativeEVM && value.Sign() != 0 {
		return "", fmt.Errorf("the Uniswap swap sends %s wei of native coin, which does not match the %s asked: nothing was signed", value, fromSym)
	}
	out, err := e.execute(ctx, plan{to: target, value: value, data: data, what: []string{"chain: " + ch.name, "from: " + c.keys.evmAddr.Hex(),
		"to: " + target.Hex() + " (Uniswap)", "amount: " + formatUnits(amount, fromDec) + " " + fromSym,
		fmt.Sprintf("expected: %s %s (slippage %s%%)", formatUnits(expected, toDec), toSym, formatUnits(big.NewInt(int64(bps)), 2))}})
	if err != nil {
		return "", err
	}
	return strings.Join(append(lines, out), "\n"), nil
}
