package wallet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/guilds/guilds/internal/adapters/wallet/wallettest"
)

// startGanache runs the local Ethereum node with the given keys funded.
func startGanache(t testing.TB, funded ...string) string {
	t.Helper()
	return wallettest.StartGanache(t, funded...)
}

func rpcCall(url, method string, out any, params ...any) error {
	if params == nil {
		params = []any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var ans struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return err
	}
	if ans.Error != nil {
		return fmt.Errorf("%s: %s", method, ans.Error.Message)
	}
	return json.Unmarshal(ans.Result, out)
}

// asm assembles EVM bytecode with labelled jumps (PUSH2 targets).
type asm struct {
	b      []byte
	labels map[string]int
	fixups map[int]string
}

func newAsm() *asm { return &asm{labels: map[string]int{}, fixups: map[int]string{}} }

func (a *asm) op(b ...byte) *asm { a.b = append(a.b, b...); return a }
func (a *asm) push1(v byte) *asm { return a.op(0x60, v) }
func (a *asm) push4(v uint32) *asm {
	return a.op(0x63, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}
func (a *asm) jumpTo(label string) *asm {
	a.fixups[len(a.b)+1] = label
	return a.op(0x61, 0, 0)
}
func (a *asm) label(name string) *asm { a.labels[name] = len(a.b); return a.op(0x5b) }
func (a *asm) bytes() []byte {
	for at, l := range a.fixups {
		a.b[at], a.b[at+1] = byte(a.labels[l]>>8), byte(a.labels[l])
	}
	return a.b
}

// EVM opcodes the token uses.
const (
	opADD, opSUB, opLT, opEQ, opSHR                 = 0x01, 0x03, 0x10, 0x14, 0x1c
	opCALLER, opCALLDATALOAD, opCODECOPY            = 0x33, 0x35, 0x39
	opPOP, opMSTORE, opSLOAD, opSSTORE, opJUMPI     = 0x50, 0x52, 0x54, 0x55, 0x57
	opDUP1, opDUP2, opDUP3, opSWAP1, opRETURN, opRV = 0x80, 0x81, 0x82, 0x90, 0xf3, 0xfd
)

// tokenRuntime is a minimal ERC-20 ("TST", 6 decimals) written as EVM
// assembly, so the test needs no compiler. Its source, as Solidity would
// say it:
//
//	mapping(address => uint256) balanceOf;      // slot = the address itself
//	function decimals() returns (uint8) { return 6; }
//	function symbol() returns (string) { return "TST"; }
//	function balanceOf(address a) returns (uint256) { return sload(a); }
//	function allowance(address, address) returns (uint256) { return 0; }
//	function approve(address, uint256) returns (bool) { return true; }
//	function transfer(address to, uint256 amt) returns (bool) {
//	    require(sload(msg.sender) >= amt);
//	    sstore(msg.sender, sload(msg.sender) - amt);
//	    sstore(to, sload(to) + amt);
//	    return true;
//	}
//
// (no events; allowances are always zero and approvals do nothing, which
// is enough for the swap tools to approve before they swap).
func tokenRuntime() []byte {
	a := newAsm()
	a.push1(0).op(opCALLDATALOAD).push1(0xe0).op(opSHR)
	for sel, l := range map[uint32]string{0x313ce567: "dec", 0x95d89b41: "sym", 0x70a08231: "bal", 0xa9059cbb: "xfer",
		0xdd62ed3e: "zero", 0x095ea7b3: "true"} {
		a.op(opDUP1).push4(sel).op(opEQ).jumpTo(l).op(opJUMPI)
	}
	a.label("revert").push1(0).op(opDUP1, opRV)
	a.label("zero").push1(0).push1(0).op(opMSTORE).push1(32).push1(0).op(opRETURN)
	a.label("true").push1(1).push1(0).op(opMSTORE).push1(32).push1(0).op(opRETURN)
	a.label("dec").push1(6).push1(0).op(opMSTORE).push1(32).push1(0).op(opRETURN)
	sym := make([]byte, 32)
	copy(sym, "TST")
	a.label("sym").push1(32).push1(0).op(opMSTORE).push1(3).push1(32).op(opMSTORE).op(append([]byte{0x7f}, sym...)...).
		push1(64).op(opMSTORE).push1(96).push1(0).op(opRETURN)
	a.label("bal").push1(4).op(opCALLDATALOAD, opSLOAD).push1(0).op(opMSTORE).push1(32).push1(0).op(opRETURN)
	a.label("xfer").push1(36).op(opCALLDATALOAD, opCALLER, opSLOAD, opDUP2, opDUP2, opLT).jumpTo("revert").op(opJUMPI).
		op(opDUP2, opSWAP1, opSUB, opCALLER, opSSTORE).
		push1(4).op(opCALLDATALOAD, opDUP1, opSLOAD, opDUP3, opADD, opSWAP1, opSSTORE, opPOP).
		push1(1).push1(0).op(opMSTORE).push1(32).push1(0).op(opRETURN)
	return a.bytes()
}

// tokenInit is the creation code: the deployer gets supply base units,
// then the runtime is returned.
func tokenInit(supply *big.Int) []byte {
	rt := tokenRuntime()
	const initLen = 50
	b := append([]byte{0x7f}, common.LeftPadBytes(supply.Bytes(), 32)...)
	b = append(b, opCALLER, opSSTORE)
	b = append(b, 0x61, byte(len(rt)>>8), byte(len(rt)), 0x61, 0, initLen, 0x60, 0, opCODECOPY)
	b = append(b, 0x61, byte(len(rt)>>8), byte(len(rt)), 0x60, 0, opRETURN)
	if len(b) != initLen {
		panic(fmt.Sprintf("init code is %d bytes", len(b)))
	}
	return append(b, rt...)
}

// deployToken deploys the token from key on the node and answers its address.
func deployToken(t *testing.T, node, keyHex string, supply *big.Int) common.Address {
	t.Helper()
	key, err := crypto.HexToECDSA(keyHex)
	if err != nil {
		t.Fatal(err)
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	var nonce hexutil.Uint64
	if err := rpcCall(node, "eth_getTransactionCount", &nonce, from, "pending"); err != nil {
		t.Fatal(err)
	}
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(1)), &types.DynamicFeeTx{ChainID: big.NewInt(1),
		Nonce: uint64(nonce), GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(100e9), Gas: 500_000, Data: tokenInit(supply)})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tx.MarshalBinary()
	var h common.Hash
	if err := rpcCall(node, "eth_sendRawTransaction", &h, hexutil.Bytes(raw)); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Status          hexutil.Uint64  `json:"status"`
		ContractAddress *common.Address `json:"contractAddress"`
	}
	for i := 0; i < 50 && r.ContractAddress == nil; i++ {
		_ = rpcCall(node, "eth_getTransactionReceipt", &r, h)
		time.Sleep(100 * time.Millisecond)
	}
	if r.Status != 1 || r.ContractAddress == nil {
		t.Fatalf("token deploy failed: %+v", r)
	}
	return *r.ContractAddress
}

// txSender fetches a mined transaction and recovers its signer.
func txSender(t *testing.T, node string, hash string) (common.Address, *types.Transaction) {
	t.Helper()
	var tx types.Transaction
	if err := rpcCall(node, "eth_getTransactionByHash", &tx, hash); err != nil {
		t.Fatal(err)
	}
	from, err := types.Sender(types.LatestSignerForChainID(big.NewInt(1)), &tx)
	if err != nil {
		t.Fatal(err)
	}
	return from, &tx
}

var _ = context.Background
