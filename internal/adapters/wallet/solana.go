package wallet

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/gagliardetto/solana-go"
	ata "github.com/gagliardetto/solana-go/programs/associated-token-account"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/gagliardetto/solana-go/programs/token"

	"github.com/guilds/guilds/internal/adapters"
)

const lamportDecimals = 9

// sol is one call's view of Solana: Alchemy's solana-mainnet node and the
// wallet's key.
type sol struct {
	rpc  *rpcClient
	keys *keys
}

func newSol(c adapters.Conn, ep endpoints, k *keys) *sol {
	return &sol{rpc: newRPC(c, ep.solana(k.alchemy), ""), keys: k}
}

func (s *sol) slot(ctx context.Context) (uint64, error) {
	var n uint64
	err := s.rpc.call(ctx, "getSlot", &n)
	return n, err
}

func (s *sol) lamports(ctx context.Context, who solana.PublicKey) (uint64, error) {
	var ans struct {
		Value uint64 `json:"value"`
	}
	err := s.rpc.call(ctx, "getBalance", &ans, who.String(), map[string]string{"commitment": "confirmed"})
	return ans.Value, err
}

// tokenAccount is one SPL token account of an owner, as jsonParsed shows it.
type tokenAccount struct {
	Pubkey  string `json:"pubkey"`
	Account struct {
		Data struct {
			Parsed struct {
				Info struct {
					Mint        string `json:"mint"`
					TokenAmount struct {
						Amount   string `json:"amount"`
						Decimals int    `json:"decimals"`
					} `json:"tokenAmount"`
				} `json:"info"`
			} `json:"parsed"`
		} `json:"data"`
	} `json:"account"`
}

// tokenAccounts are the owner's accounts of one mint.
func (s *sol) tokenAccounts(ctx context.Context, owner, mint solana.PublicKey) ([]tokenAccount, error) {
	var ans struct {
		Value []tokenAccount `json:"value"`
	}
	err := s.rpc.call(ctx, "getTokenAccountsByOwner", &ans, owner.String(), map[string]string{"mint": mint.String()},
		map[string]string{"encoding": "jsonParsed", "commitment": "confirmed"})
	return ans.Value, err
}

// mintDecimals reads a mint's decimals (getTokenSupply answers them).
func (s *sol) mintDecimals(ctx context.Context, mint solana.PublicKey) (int, error) {
	var ans struct {
		Value struct {
			Decimals int `json:"decimals"`
		} `json:"value"`
	}
	if err := s.rpc.call(ctx, "getTokenSupply", &ans, mint.String()); err != nil {
		return 0, fmt.Errorf("mint %s: %w", mint, err)
	}
	return ans.Value.Decimals, nil
}

func (s *sol) tokenBalance(ctx context.Context, owner, mint solana.PublicKey) (*big.Int, int, error) {
	accts, err := s.tokenAccounts(ctx, owner, mint)
	if err != nil {
		return nil, 0, err
	}
	total := new(big.Int)
	decimals := -1
	for _, a := range accts {
		info := a.Account.Data.Parsed.Info
		v, ok := new(big.Int).SetString(info.TokenAmount.Amount, 10)
		if !ok {
			return nil, 0, errors.New("the node's token amount is not a number")
		}
		total.Add(total, v)
		decimals = info.TokenAmount.Decimals
	}
	if decimals < 0 {
		if decimals, err = s.mintDecimals(ctx, mint); err != nil {
			return nil, 0, err
		}
	}
	return total, decimals, nil
}

func (s *sol) blockhash(ctx context.Context) (solana.Hash, error) {
	var ans struct {
		Value struct {
			Blockhash string `json:"blockhash"`
		} `json:"value"`
	}
	if err := s.rpc.call(ctx, "getLatestBlockhash", &ans, map[string]string{"commitment": "confirmed"}); err != nil {
		return solana.Hash{}, err
	}
	return solana.HashFromBase58(ans.Value.Blockhash)
}

// fee is what the network charges for a message, in lamports (nil when the
// node cannot say, e.g. for an expired blockhash).
func (s *sol) fee(ctx context.Context, tx *solana.Transaction) *big.Int {
	msg, err := tx.Message.MarshalBinary()
	if err != nil {
		return nil
	}
	var ans struct {
		Value *uint64 `json:"value"`
	}
	if s.rpc.call(ctx, "getFeeForMessage", &ans, base64.StdEncoding.EncodeToString(msg), map[string]string{"commitment": "confirmed"}) != nil || ans.Value == nil {
		return nil
	}
	return new(big.Int).SetUint64(*ans.Value)
}

// pubkey parses a base58 Solana address argument.
func pubkey(field, s string) (solana.PublicKey, error) {
	k, err := solana.PublicKeyFromBase58(strings.TrimSpace(s))
	if err != nil {
		return solana.PublicKey{}, fmt.Errorf("%s %q is not a Solana address (base58, 32 bytes)", field, s)
	}
	return k, nil
}

// transfer builds the transfer of lamports (mint zero) or of a token.
func (s *sol) transfer(ctx context.Context, to solana.PublicKey, mint *solana.PublicKey, amount string) (*solana.Transaction, []string, error) {
	from := s.keys.solAddr
	var ins []solana.Instruction
	var what string
	if mint == nil {
		v, err := positive("amount", amount, lamportDecimals)
		if err != nil {
			return nil, nil, err
		}
		if !v.IsUint64() {
			return nil, nil, fmt.Errorf("amount %q is more than a Solana transfer can carry", amount)
		}
		ins = append(ins, system.NewTransferInstruction(v.Uint64(), from, to).Build())
		what = formatUnits(v, lamportDecimals) + " SOL"
	} else {
		decimals, err := s.mintDecimals(ctx, *mint)
		if err != nil {
			return nil, nil, err
		}
		if decimals < 0 || decimals > 255 {
			return nil, nil, fmt.Errorf("mint %s answers %d decimals", mint, decimals)
		}
		v, err := positive("amount", amount, decimals)
		if err != nil {
			return nil, nil, err
		}
		if !v.IsUint64() {
			return nil, nil, fmt.Errorf("amount %q is more than a token transfer can carry", amount)
		}
		src, _, err := solana.FindAssociatedTokenAddress(from, *mint)
		if err != nil {
			return nil, nil, err
		}
		dst, _, err := solana.FindAssociatedTokenAddress(to, *mint)
		if err != nil {
			return nil, nil, err
		}
		existing, err := s.tokenAccounts(ctx, to, *mint)
		if err != nil {
			return nil, nil, err
		}
		if !holds(existing, dst) {
			ins = append(ins, ata.NewCreateInstruction(from, to, *mint).Build())
		}
		d8 := uint8(decimals) //nolint:gosec // checked to be a byte above
		ins = append(ins, token.NewTransferCheckedInstruction(v.Uint64(), d8, src, *mint, dst, from, nil).Build())
		what = formatUnits(v, decimals) + " of mint " + mint.String()
	}
	bh, err := s.blockhash(ctx)
	if err != nil {
		return nil, nil, err
	}
	tx, err := solana.NewTransaction(ins, bh, solana.TransactionPayer(from))
	if err != nil {
		return nil, nil, err
	}
	return tx, []string{"chain: solana", "from: " + from.String(), "to: " + to.String(), "amount: " + what}, nil
}

func holds(accts []tokenAccount, k solana.PublicKey) bool {
	for _, a := range accts {
		if a.Pubkey == k.String() {
			return true
		}
	}
	return false
}

// sign signs tx with the wallet's key at its place among the signers and
// keeps the other signatures (a prebuilt transaction may carry them).
func (s *sol) sign(tx *solana.Transaction) error {
	n := int(tx.Message.Header.NumRequiredSignatures)
	if n == 0 || n > len(tx.Message.AccountKeys) {
		return errors.New("the transaction names no signer")
	}
	at := -1
	for i, k := range tx.Message.AccountKeys[:n] {
		if k.Equals(s.keys.solAddr) {
			at = i
		}
	}
	if at < 0 {
		return fmt.Errorf("the wallet %s is not one of the transaction's signers: nothing was signed", s.keys.solAddr)
	}
	if len(tx.Signatures) != n {
		tx.Signatures = make([]solana.Signature, n)
	}
	msg, err := tx.Message.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encoding the message: %w", err)
	}
	sig, err := s.keys.sol.Sign(msg)
	if err != nil {
		return err
	}
	tx.Signatures[at] = sig
	return nil
}

// execute signs and sends tx; a send whose answer is lost is not sent
// again, and the result names its signature to check.
func (s *sol) execute(ctx context.Context, tx *solana.Transaction, what []string) (string, error) {
	if err := s.sign(tx); err != nil {
		return "", err
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return "", err
	}
	lines := append([]string{}, what...)
	if f := s.fee(ctx, tx); f != nil {
		lines = append(lines, "fee: "+formatUnits(f, lamportDecimals)+" SOL")
	}
	// A transaction's id is its first signature (the fee payer's).
	lines = append(lines, "signature: "+tx.Signatures[0].String())
	var got string
	err = s.rpc.call(ctx, "sendTransaction", &got, base64.StdEncoding.EncodeToString(raw),
		map[string]any{"encoding": "base64", "preflightCommitment": "confirmed", "maxRetries": 0})
	var re *rpcError
	switch {
	case errors.As(err, &re):
		return "", fmt.Errorf("the Solana node refused the transaction (nothing was sent): %w", err)
	case err != nil:
		lines = append(lines, "status: unknown — the send's answer was lost ("+err.Error()+"); check the signature before sending again")
	default:
		lines = append(lines, "status: sent")
	}
	return strings.Join(lines, "\n"), nil
}

// decodeTx reads a base64 transaction argument.
func decodeTx(b64 string) (*solana.Transaction, error) {
	b64 = strings.TrimSpace(b64)
	if b64 == "" {
		return nil, errors.New("transaction is required (a base64 Solana transaction)")
	}
	if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
		return nil, errors.New("transaction is not base64")
	}
	tx, err := solana.TransactionFromBase64(b64)
	if err != nil {
		return nil, fmt.Errorf("transaction is base64 but not a Solana transaction: %v", err)
	}
	if len(tx.Message.AccountKeys) == 0 {
		return nil, errors.New("transaction is base64 but not a Solana transaction: it names no account")
	}
	return tx, nil
}
