package wallet

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// evm is one call's view of an EVM chain: its node and the wallet's key.
type evm struct {
	ch   chain
	rpc  *rpcClient
	keys *keys
}

func (e *evm) blockNumber(ctx context.Context) (uint64, error) {
	var n hexutil.Uint64
	err := e.rpc.call(ctx, "eth_blockNumber", &n)
	return uint64(n), err
}

// chainID is the chain's id, checked against the node's answer.
func (e *evm) chainID(ctx context.Context) (*big.Int, error) {
	var id hexutil.Big
	if err := e.rpc.call(ctx, "eth_chainId", &id); err != nil {
		return nil, err
	}
	got := (*big.Int)(&id)
	if e.ch.id != 0 && got.Cmp(big.NewInt(e.ch.id)) != 0 {
		return nil, fmt.Errorf("the %s node answers chain id %s, not %d: nothing was signed", e.ch.name, got, e.ch.id)
	}
	return got, nil
}

func (e *evm) nativeBalance(ctx context.Context, addr common.Address) (*big.Int, error) {
	var b hexutil.Big
	err := e.rpc.call(ctx, "eth_getBalance", &b, addr, "latest")
	return (*big.Int)(&b), err
}

// ethCall runs a read-only call and answers its return data.
func (e *evm) ethCall(ctx context.Context, to common.Address, data []byte) ([]byte, error) {
	var out hexutil.Bytes
	err := e.rpc.call(ctx, "eth_call", &out, map[string]any{"to": to, "data": hexutil.Bytes(data)}, "latest")
	return out, err
}

// ERC-20 selectors.
var (
	selBalanceOf = []byte{0x70, 0xa0, 0x82, 0x31}
	selDecimals  = []byte{0x31, 0x3c, 0xe5, 0x67}
	selSymbol    = []byte{0x95, 0xd8, 0x9b, 0x41}
	selTransfer  = []byte{0xa9, 0x05, 0x9c, 0xbb}
)

func word(b []byte) []byte { return common.LeftPadBytes(b, 32) }

// tokenInfo reads a token's decimals and symbol (a symbol it does not
// answer is "").
func (e *evm) tokenInfo(ctx context.Context, token common.Address) (int, string, error) {
	raw, err := e.ethCall(ctx, token, selDecimals)
	if err != nil {
		return 0, "", fmt.Errorf("token %s: reading its decimals: %w", token.Hex(), err)
	}
	if len(raw) != 32 {
		return 0, "", fmt.Errorf("token %s answers no decimals(): is it an ERC-20 contract on %s?", token.Hex(), e.ch.name)
	}
	d := new(big.Int).SetBytes(raw)
	if d.Cmp(big.NewInt(77)) > 0 {
		return 0, "", fmt.Errorf("token %s answers %s decimals", token.Hex(), d)
	}
	return int(d.Int64()), abiString(e.ethCallQuiet(ctx, token, selSymbol)), nil
}

func (e *evm) ethCallQuiet(ctx context.Context, to common.Address, data []byte) []byte {
	out, _ := e.ethCall(ctx, to, data)
	return out
}

// abiString decodes an ABI string return (or a bytes32 one), "" if neither.
func abiString(b []byte) string {
	if len(b) >= 64 {
		n := new(big.Int).SetBytes(b[32:64])
		if n.IsInt64() && 64+n.Int64() <= int64(len(b)) && n.Int64() <= 64 {
			return printable(string(b[64 : 64+n.Int64()]))
		}
	}
	if len(b) == 32 {
		return printable(strings.TrimRight(string(b), "\x00"))
	}
	return ""
}

func printable(s string) string {
	for _, r := range s {
		if r < ' ' || r > '~' {
			return ""
		}
	}
	return s
}

func (e *evm) tokenBalance(ctx context.Context, token, owner common.Address) (*big.Int, error) {
	raw, err := e.ethCall(ctx, token, append(append([]byte{}, selBalanceOf...), word(owner.Bytes())...))
	if err != nil {
		return nil, err
	}
	if len(raw) != 32 {
		return nil, fmt.Errorf("token %s answers no balanceOf()", token.Hex())
	}
	return new(big.Int).SetBytes(raw), nil
}

// plan is a transaction to sign: what it does, in words for the result.
type plan struct {
	to    common.Address
	value *big.Int
	data  []byte
	what  []string // lines stating chain, from, to, amount
}

// fees are a transaction's fee terms: EIP-1559 when the chain has a base
// fee, else a legacy gas price (EIP-155 signed either way).
type fees struct {
	gas                 uint64
	tip, maxFee, legacy *big.Int
}

func (f fees) cap() *big.Int {
	price := f.maxFee
	if f.legacy != nil {
		price = f.legacy
	}
	return new(big.Int).Mul(price, new(big.Int).SetUint64(f.gas))
}

func (e *evm) fees(ctx context.Context, from common.Address, p plan) (fees, error) {
	var gas hexutil.Uint64
	msg := map[string]any{"from": from, "to": p.to, "value": (*hexutil.Big)(p.value), "data": hexutil.Bytes(p.data)}
	if err := e.rpc.call(ctx, "eth_estimateGas", &gas, msg); err != nil {
		return fees{}, fmt.Errorf("the %s node would not run it (estimating its gas): %w", e.ch.name, err)
	}
	f := fees{gas: uint64(gas) + uint64(gas)/5} // a fifth more than the estimate: state may move before it is mined
	var head struct {
		BaseFee *hexutil.Big `json:"baseFeePerGas"`
	}
	if err := e.rpc.call(ctx, "eth_getBlockByNumber", &head, "latest", false); err != nil {
		return fees{}, err
	}
	if head.BaseFee == nil {
		var price hexutil.Big
		if err := e.rpc.call(ctx, "eth_gasPrice", &price); err != nil {
			return fees{}, err
		}
		f.legacy = (*big.Int)(&price)
		return f, nil
	}
	var tip hexutil.Big
	if err := e.rpc.call(ctx, "eth_maxPriorityFeePerGas", &tip); err != nil {
		tip = hexutil.Big(*big.NewInt(1_000_000_000)) // 1 gwei where the node has no estimate
	}
	f.tip = (*big.Int)(&tip)
	f.maxFee = new(big.Int).Add(new(big.Int).Mul((*big.Int)(head.BaseFee), big.NewInt(2)), f.tip)
	return f, nil
}

// receiptWait bounds how long a call waits for its transaction to be mined.
var receiptWait = 20 * time.Second

// execute signs and broadcasts a plan, then waits a little for its receipt.
// A broadcast whose answer is lost is never sent again: the result names
// the transaction hash to check instead.
func (e *evm) execute(ctx context.Context, p plan) (string, error) {
	from := e.keys.evmAddr
	id, err := e.chainID(ctx)
	if err != nil {
		return "", err
	}
	var nonce hexutil.Uint64
	if err := e.rpc.call(ctx, "eth_getTransactionCount", &nonce, from, "pending"); err != nil {
		return "", err
	}
	f, err := e.fees(ctx, from, p)
	if err != nil {
		return "", err
	}
	var inner types.TxData
	if f.legacy != nil {
		inner = &types.LegacyTx{Nonce: uint64(nonce), GasPrice: f.legacy, Gas: f.gas, To: &p.to, Value: p.value, Data: p.data}
	} else {
		inner = &types.DynamicFeeTx{ChainID: id, Nonce: uint64(nonce), GasTipCap: f.tip, GasFeeCap: f.maxFee, Gas: f.gas, To: &p.to, Value: p.value, Data: p.data}
	}
	tx, err := types.SignNewTx(e.keys.evm, types.LatestSignerForChainID(id), inner)
	if err != nil {
		return "", fmt.Errorf("signing: %w", err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return "", err
	}
	lines := append(append([]string{}, p.what...),
		fmt.Sprintf("max_fee: %s %s (%d gas)", formatUnits(f.cap(), nativeDecimals), e.ch.symbol, f.gas),
		"tx_hash: "+tx.Hash().Hex())
	if e.rpc.usedPublic() {
		lines = append(lines, "rpc: public (Alchemy refused the key for "+e.ch.name+")")
	}
	var hash common.Hash
	if err := e.rpc.call(ctx, "eth_sendRawTransaction", &hash, hexutil.Bytes(raw)); err != nil {
		var re *rpcError
		if errors.As(err, &re) {
			return "", fmt.Errorf("the %s node refused the transaction (nothing was sent): %w", e.ch.name, err)
		}
		// The node may have taken it: it is not sent again.
		lines = append(lines, "status: unknown — the broadcast's answer was lost ("+err.Error()+"); check tx_hash before sending again")
		return strings.Join(lines, "\n"), nil
	}
	lines = append(lines, "status: "+e.waitReceipt(ctx, tx.Hash()))
	return strings.Join(lines, "\n"), nil
}

func (e *evm) waitReceipt(ctx context.Context, h common.Hash) string {
	ctx, cancel := context.WithTimeout(ctx, receiptWait)
	defer cancel()
	for delay := 100 * time.Millisecond; ; delay = min(delay*2, 2*time.Second) {
		var r *struct {
			Status      hexutil.Uint64 `json:"status"`
			BlockNumber hexutil.Uint64 `json:"blockNumber"`
			GasUsed     hexutil.Uint64 `json:"gasUsed"`
		}
		if err := e.rpc.call(ctx, "eth_getTransactionReceipt", &r, h); err == nil && r != nil {
			if r.Status == 1 {
				return fmt.Sprintf("confirmed in block %d (%d gas used)", r.BlockNumber, r.GasUsed)
			}
			return fmt.Sprintf("reverted in block %d (%d gas used)", r.BlockNumber, r.GasUsed)
		}
		select {
		case <-ctx.Done():
			return "pending — broadcast, not yet mined; check tx_hash"
		case <-time.After(delay):
		}
	}
}

// address parses a 0x address argument.
func address(field, s string) (common.Address, error) {
	s = strings.TrimSpace(s)
	if !common.IsHexAddress(s) || !strings.HasPrefix(strings.ToLower(s), "0x") {
		return common.Address{}, fmt.Errorf("%s %q is not an EVM address (0x and 40 hex digits)", field, s)
	}
	return common.HexToAddress(s), nil
}

// calldata parses 0x-prefixed hex calldata.
func calldata(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	h, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return nil, errors.New("data must be 0x-prefixed hex calldata")
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, errors.New("data is not hex: it must be 0x followed by an even number of hex digits")
	}
	return b, nil
}
