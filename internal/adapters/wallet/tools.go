package wallet

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/gagliardetto/solana-go"
)

// getAddress answers the wallet's address on a chain, or both.
func getAddress(_ context.Context, c *call, in args) (string, error) {
	if strings.TrimSpace(in.Chain) == "" {
		return "evm: " + c.keys.evmAddr.Hex() + "\nsolana: " + c.keys.solAddr.String(), nil
	}
	n, err := chainName(in.Chain)
	if err != nil {
		return "", err
	}
	if n == solanaName {
		return "solana: " + c.keys.solAddr.String(), nil
	}
	return n + ": " + c.keys.evmAddr.Hex(), nil
}

// getBalance answers the native coin's or a token's balance as a human
// decimal string, converted exactly with the token's decimals.
func getBalance(ctx context.Context, c *call, in args) (string, error) {
	n, err := chainName(in.Chain)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(in.Token)
	if n == solanaName {
		s := c.sol()
		if token == "" {
			l, err := s.lamports(ctx, c.keys.solAddr)
			if err != nil {
				return "", err
			}
			return balanceLine("solana", c.keys.solAddr.String(), new(big.Int).SetUint64(l), lamportDecimals, "SOL"), nil
		}
		mint, err := pubkey("token", token)
		if err != nil {
			return "", err
		}
		v, d, err := s.tokenBalance(ctx, c.keys.solAddr, mint)
		if err != nil {
			return "", err
		}
		return balanceLine("solana", c.keys.solAddr.String(), v, d, "mint "+mint.String()), nil
	}
	e := c.evm(evmChains[n])
	if token == "" {
		v, err := e.nativeBalance(ctx, c.keys.evmAddr)
		if err != nil {
			return "", err
		}
		return balanceLine(n, c.keys.evmAddr.Hex(), v, nativeDecimals, e.ch.symbol), nil
	}
	addr, err := address("token", token)
	if err != nil {
		return "", err
	}
	d, sym, err := e.tokenInfo(ctx, addr)
	if err != nil {
		return "", err
	}
	v, err := e.tokenBalance(ctx, addr, c.keys.evmAddr)
	if err != nil {
		return "", err
	}
	if sym == "" {
		sym = "token"
	}
	return balanceLine(n, c.keys.evmAddr.Hex(), v, d, sym+" "+addr.Hex()), nil
}

func balanceLine(chain, owner string, v *big.Int, decimals int, what string) string {
	return fmt.Sprintf("chain: %s\naddress: %s\nbalance: %s %s\nraw: %s (%d decimals)", chain, owner, formatUnits(v, decimals), what, v, decimals)
}

// send transfers the native coin or a token (an ERC-20 contract, or an SPL
// mint on Solana).
func send(ctx context.Context, c *call, in args) (string, error) {
	n, err := chainName(in.Chain)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(in.Token)
	if n == solanaName {
		to, err := pubkey("to", in.To)
		if err != nil {
			return "", err
		}
		var mint *solana.PublicKey
		if token != "" {
			m, err := pubkey("token", token)
			if err != nil {
				return "", err
			}
			mint = &m
		}
		s := c.sol()
		tx, what, err := s.transfer(ctx, to, mint, in.Amount)
		if err != nil {
			return "", err
		}
		return s.execute(ctx, tx, what)
	}
	to, err := address("to", in.To)
	if err != nil {
		return "", err
	}
	e := c.evm(evmChains[n])
	if token == "" {
		v, err := positive("amount", in.Amount, nativeDecimals)
		if err != nil {
			return "", err
		}
		return e.execute(ctx, plan{to: to, value: v, what: []string{"chain: " + n, "from: " + c.keys.evmAddr.Hex(), "to: " + to.Hex(),
			"amount: " + formatUnits(v, nativeDecimals) + " " + e.ch.symbol}})
	}
	contract, err := address("token", token)
	if err != nil {
		return "", err
	}
	// The amount is checked before the token is asked anything else.
	if err := decimalShape("amount", in.Amount); err != nil {
		return "", err
	}
	d, sym, err := e.tokenInfo(ctx, contract)
	if err != nil {
		return "", err
	}
	v, err := positive("amount", in.Amount, d)
	if err != nil {
		return "", err
	}
	if sym == "" {
		sym = "tokens"
	}
	data := append(append(append([]byte{}, selTransfer...), word(to.Bytes())...), word(v.Bytes())...)
	return e.execute(ctx, plan{to: contract, value: new(big.Int), data: data, what: []string{"chain: " + n, "from: " + c.keys.evmAddr.Hex(),
		"to: " + to.Hex(), "amount: " + formatUnits(v, d) + " " + sym + " (token " + contract.Hex() + ")"}})
}

// callContract sends 0x calldata (with an optional native value) to a
// contract on an EVM chain.
func callContract(ctx context.Context, c *call, in args) (string, error) {
	ch, err := evmChain(in.Chain)
	if err != nil {
		return "", err
	}
	to, err := address("to", in.To)
	if err != nil {
		return "", err
	}
	data, err := calldata(in.Data)
	if err != nil {
		return "", err
	}
	value := new(big.Int)
	if strings.TrimSpace(in.Value) != "" {
		if value, err = parseAmount("value", in.Value, nativeDecimals); err != nil {
			return "", err
		}
	}
	e := c.evm(ch)
	sel := "none"
	if len(data) >= 4 {
		sel = "0x" + common.Bytes2Hex(data[:4])
	}
	return e.execute(ctx, plan{to: to, value: value, data: data, what: []string{"chain: " + ch.name, "from: " + c.keys.evmAddr.Hex(),
		"to: " + to.Hex(), "amount: " + formatUnits(value, nativeDecimals) + " " + ch.symbol,
		fmt.Sprintf("data: %d bytes, selector %s", len(data), sel)}})
}

// submit signs a prebuilt base64 Solana transaction with the wallet's key
// and sends it.
func submit(ctx context.Context, c *call, in args) (string, error) {
	tx, err := decodeTx(in.Transaction)
	if err != nil {
		return "", err
	}
	s := c.sol()
	return s.execute(ctx, tx, []string{"chain: solana", "from: " + c.keys.solAddr.String(),
		"to: the programs " + strings.Join(programs(tx), ", ") + " (a prebuilt transaction: its amounts are its instructions')",
		fmt.Sprintf("instructions: %d, accounts: %d, signers: %d", len(tx.Message.Instructions), len(tx.Message.AccountKeys), tx.Message.Header.NumRequiredSignatures)})
}

// programs are the distinct programs a transaction's instructions call (a
// versioned transaction's lookup-table accounts are not resolved).
func programs(tx *solana.Transaction) []string {
	var out []string
	seen := map[uint16]bool{}
	for _, ix := range tx.Message.Instructions {
		if seen[ix.ProgramIDIndex] {
			continue
		}
		seen[ix.ProgramIDIndex] = true
		if int(ix.ProgramIDIndex) < len(tx.Message.AccountKeys) {
			out = append(out, tx.Message.AccountKeys[ix.ProgramIDIndex].String())
		} else {
			out = append(out, fmt.Sprintf("#%d (from a lookup table)", ix.ProgramIDIndex))
		}
	}
	return out
}
