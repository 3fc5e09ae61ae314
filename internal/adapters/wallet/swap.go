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
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/gagliardetto/solana-go"
)

// defaultSlippageBps is a swap's slippage when the call names none (0.5 %);
// maxSlippageBps refuses a bound that is no bound.
const (
	defaultSlippageBps = 50
	maxSlippageBps     = 1000
)

// slippage reads a percent string ("0.5") into basis points.
func slippage(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return defaultSlippageBps, nil
	}
	bps, err := parseAmount("slippage", s, 2)
	if err != nil {
		return 0, fmt.Errorf("slippage is a percent such as \"0.5\" (two decimals at most): %w", err)
	}
	if bps.Sign() == 0 || bps.Cmp(big.NewInt(maxSlippageBps)) > 0 {
		return 0, fmt.Errorf("slippage must be more than 0 and at most %d%%", maxSlippageBps/100)
	}
	return int(bps.Int64()), nil
}

// nativeEVM is the address aggregators use for a chain's native coin.
var nativeEVM = common.Address{}

// evmToken reads a token argument: the native coin (its symbol, "native"
// or the zero address) or an ERC-20 contract, with its decimals and symbol.
func (e *evm) token(ctx context.Context, field, raw string) (common.Address, int, string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return common.Address{}, 0, "", fmt.Errorf("%s is required (a token contract, or %s for the native coin)", field, e.ch.symbol)
	}
	if strings.EqualFold(s, e.ch.symbol) || strings.EqualFold(s, "native") || strings.EqualFold(s, nativeEVM.Hex()) {
		return nativeEVM, nativeDecimals, e.ch.symbol, nil
	}
	addr, err := address(field, s)
	if err != nil {
		return common.Address{}, 0, "", err
	}
	d, sym, err := e.tokenInfo(ctx, addr)
	if sym == "" {
		sym = addr.Hex()
	}
	return addr, d, sym, err
}

// txRequest is a prebuilt EVM transaction an aggregator answers.
type txRequest struct {
	To    string `json:"to"`
	Data  string `json:"data"`
	Value string `json:"value"`
}

func (r txRequest) plan(field string) (common.Address, *big.Int, []byte, error) {
	to, err := address(field+".to", r.To)
	if err != nil {
		return common.Address{}, nil, nil, err
	}
	data, err := calldata(r.Data)
	if err != nil {
		return common.Address{}, nil, nil, fmt.Errorf("%s: %w", field, err)
	}
	value := new(big.Int)
	if v := strings.TrimSpace(r.Value); v != "" && v != "0" && v != "0x0" && v != "0x" {
		var ok bool
		if strings.HasPrefix(v, "0x") {
			value, ok = new(big.Int).SetString(v[2:], 16)
		} else {
			value, ok = new(big.Int).SetString(v, 10)
		}
		if !ok || value.Sign() < 0 {
			return common.Address{}, nil, nil, fmt.Errorf("%s: value %q is not a number", field, v)
		}
	}
	return to, value, data, nil
}

var (
	selAllowance = []byte{0xdd, 0x62, 0xed, 0x3e}
	selApprove   = []byte{0x09, 0x5e, 0xa7, 0xb3}
)

// approve lets spender move amount of token when its allowance is short,
// and answers the approval's result lines ("" when none was needed).
func (e *evm) approve(ctx context.Context, token, spender common.Address, amount *big.Int, what string) (string, error) {
	raw, err := e.ethCall(ctx, token, append(append(append([]byte{}, selAllowance...), word(e.keys.evmAddr.Bytes())...), word(spender.Bytes())...))
	if err != nil {
		return "", fmt.Errorf("reading the allowance: %w", err)
	}
	if new(big.Int).SetBytes(raw).Cmp(amount) >= 0 {
		return "", nil
	}
	data := append(append(append([]byte{}, selApprove...), word(spender.Bytes())...), word(amount.Bytes())...)
	out, err := e.execute(ctx, plan{to: token, value: new(big.Int), data: data, what: []string{"approval: " + what + " for " + spender.Hex()}})
	if err != nil {
		return "", fmt.Errorf("approving the swap: %w", err)
	}
	if !strings.Contains(out, "status: confirmed") {
		return out, errStopAfterApproval
	}
	return out, nil
}

var errStopAfterApproval = errors.New("the approval is not confirmed yet, so the swap was not sent: check its tx_hash and swap again")

// swap quotes then executes: Jupiter on Solana, LiFi on the EVM chains it
// serves.
func swap(ctx context.Context, c *call, in args) (string, error) {
	n, err := chainName(in.Chain)
	if err != nil {
		return "", err
	}
	bps, err := slippage(in.Slippage)
	if err != nil {
		return "", err
	}
	if n == solanaName {
		return jupiterSwap(ctx, c, in, bps)
	}
	ch := evmChains[n]
	if !ch.lifi {
		return "", fmt.Errorf("swap does not run on %s (LiFi serves ethereum, polygon, base, arbitrum, bsc, optimism, hyperevm and robinhood)", n)
	}
	return lifiSwap(ctx, c, ch, in, bps)
}

func lifiSwap(ctx context.Context, c *call, ch chain, in args, bps int) (string, error) {
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
	q := url.Values{"fromChain": {id.String()}, "toChain": {id.String()}, "fromToken": {from.Hex()}, "toToken": {to.Hex()},
		"fromAmount": {amount.String()}, "fromAddress": {c.keys.evmAddr.Hex()}, "slippage": {strconv.FormatFloat(float64(bps)/10000, 'f', 4, 64)}}
	var quote struct {
		Estimate struct {
			ToAmount       string `json:"toAmount"`
			ToAmountMin    string `json:"toAmountMin"`
			ApprovalAddr   string `json:"approvalAddress"`
			ExecutionDurat any    `json:"executionDuration"`
		} `json:"estimate"`
		Tool               string    `json:"tool"`
		TransactionRequest txRequest `json:"transactionRequest"`
	}
	if err := c.conn.DoJSON(ctx, http.MethodGet, c.ep.service("lifi", lifiURL), "/quote", q, nil, nil, &quote); err != nil {
		return "", fmt.Errorf("the LiFi quote: %w", err)
	}
	toAmount, ok1 := new(big.Int).SetString(quote.Estimate.ToAmount, 10)
	toMin, ok2 := new(big.Int).SetString(quote.Estimate.ToAmountMin, 10)
	if !ok1 || !ok2 {
		return "", errors.New("the LiFi quote has no amounts")
	}
	target, value, data, err := quote.TransactionRequest.plan("LiFi's transaction")
	if err != nil {
		return "", err
	}
	if from == nativeEVM && value.Cmp(amount) != 0 {
		return "", fmt.Errorf("the LiFi transaction sends %s wei, not the %s asked: nothing was signed", value, amount)
	}
	if from != nativeEVM && value.Sign() != 0 {
		return "", errors.New("the LiFi transaction sends native coin for a token swap: nothing was signed")
	}
	what := []string{"chain: " + ch.name, "from: " + c.keys.evmAddr.Hex(), "to: " + target.Hex() + " (LiFi, " + quote.Tool + ")",
		"amount: " + formatUnits(amount, fromDec) + " " + fromSym,
		"expected: " + formatUnits(toAmount, toDec) + " " + toSym + " (at least " + formatUnits(toMin, toDec) + ")"}
	var lines []string
	if from != nativeEVM {
		spender, err := address("LiFi's approvalAddress", quote.Estimate.ApprovalAddr)
		if err != nil {
			return "", err
		}
		out, err := e.approve(ctx, from, spender, amount, formatUnits(amount, fromDec)+" "+fromSym)
		if out != "" {
			lines = append(lines, out, "")
		}
		if err != nil {
			return strings.Join(append(lines, err.Error()), "\n"), nil
		}
	}
	out, err := e.execute(ctx, plan{to: target, value: value, data: data, what: what})
	if err != nil {
		return "", err
	}
	return strings.Join(append(lines, out), "\n"), nil
}

// wrappedSOL is the mint Jupiter names native SOL by.
const wrappedSOL = "So11111111111111111111111111111111111111112"

func (s *sol) mintOf(ctx context.Context, field, raw string) (solana.PublicKey, int, error) {
	v := strings.TrimSpace(raw)
	if strings.EqualFold(v, "SOL") || strings.EqualFold(v, "native") {
		v = wrappedSOL
	}
	if v == "" {
		return solana.PublicKey{}, 0, fmt.Errorf("%s is required (a mint, or SOL)", field)
	}
	m, err := pubkey(field, v)
	if err != nil {
		return m, 0, err
	}
	if v == wrappedSOL {
		return m, lamportDecimals, nil
	}
	d, err := s.mintDecimals(ctx, m)
	return m, d, err
}

func jupiterSwap(ctx context.Context, c *call, in args, bps int) (string, error) {
	if err := decimalShape("amount", in.Amount); err != nil {
		return "", err
	}
	s := c.sol()
	from, fromDec, err := s.mintOf(ctx, "from_token", in.FromToken)
	if err != nil {
		return "", err
	}
	to, toDec, err := s.mintOf(ctx, "to_token", in.ToToken)
	if err != nil {
		return "", err
	}
	amount, err := positive("amount", in.Amount, fromDec)
	if err != nil {
		return "", err
	}
	base := c.ep.service("jupiter", jupiterURL)
	var quote json.RawMessage
	q := url.Values{"inputMint": {from.String()}, "outputMint": {to.String()}, "amount": {amount.String()}, "slippageBps": {strconv.Itoa(bps)}}
	if err := c.conn.DoJSON(ctx, http.MethodGet, base, "/quote", q, nil, nil, &quote); err != nil {
		return "", fmt.Errorf("the Jupiter quote: %w", err)
	}
	var terms struct {
		InAmount  string `json:"inAmount"`
		OutAmount string `json:"outAmount"`
		Threshold string `json:"otherAmountThreshold"`
	}
	if err := json.Unmarshal(quote, &terms); err != nil || terms.InAmount != amount.String() {
		return "", fmt.Errorf("the Jupiter quote is not for %s base units: nothing was signed", amount)
	}
	out, ok1 := new(big.Int).SetString(terms.OutAmount, 10)
	least, ok2 := new(big.Int).SetString(terms.Threshold, 10)
	if !ok1 || !ok2 {
		return "", errors.New("the Jupiter quote has no amounts")
	}
	body, _ := json.Marshal(map[string]any{"quoteResponse": quote, "userPublicKey": c.keys.solAddr.String(),
		"wrapAndUnwrapSol": true, "dynamicComputeUnitLimit": true})
	var built struct {
		SwapTransaction string `json:"swapTransaction"`
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if err := c.conn.DoJSON(ctx, http.MethodPost, base, "/swap", nil, h, bytes.NewReader(body), &built); err != nil {
		return "", fmt.Errorf("the Jupiter swap transaction: %w", err)
	}
	tx, err := decodeTx(built.SwapTransaction)
	if err != nil {
		return "", fmt.Errorf("the Jupiter swap %w", err)
	}
	if !tx.Message.AccountKeys[0].Equals(c.keys.solAddr) {
		return "", errors.New("the Jupiter transaction is not paid by the wallet: nothing was signed")
	}
	return s.execute(ctx, tx, []string{"chain: solana", "from: " + c.keys.solAddr.String(), "to: Jupiter",
		"amount: " + formatUnits(amount, fromDec) + " of " + mintName(from),
		"expected: " + formatUnits(out, toDec) + " of " + mintName(to) + " (at least " + formatUnits(least, toDec) + ")"})
}

func mintName(m solana.PublicKey) string {
	if m.String() == wrappedSOL {
		return "SOL"
	}
	return "mint " + m.String()
}
