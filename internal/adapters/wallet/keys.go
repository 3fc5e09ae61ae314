package wallet

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/gagliardetto/solana-go"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/connectors"
)

// The login's fields (the catalog row's key_fields).
const (
	FieldEVM     = "evm_private_key"
	FieldSolana  = "solana_private_key"
	FieldAlchemy = "alchemy_api_key"
	FieldOpenSea = "opensea_api_key"
	FieldUniswap = "uniswap_api_key" // optional
)

// KeyError is a key refused by its shape or by its service, naming the
// field; it matches adapters.ErrRejected, and the connect check reports the
// field (connections.KeyRejectedError). Its message never holds the key.
type KeyError struct {
	Field  string
	Reason string
}

func (e *KeyError) Error() string         { return e.Field + ": " + e.Reason }
func (e *KeyError) Unwrap() error         { return adapters.ErrRejected }
func (e *KeyError) RejectedField() string { return e.Field }

// keys is a login's parsed keys.
type keys struct {
	evm     *ecdsa.PrivateKey
	evmAddr common.Address
	sol     solana.PrivateKey
	solAddr solana.PublicKey
	alchemy string
	opensea string
	uniswap string // "" when the login has none
}

// parseKeys reads and checks every field's shape; the first malformed one
// is a *KeyError naming it. Nothing is sent anywhere.
func parseKeys(cred connectors.Credential) (*keys, error) {
	f := func(name string) string { return strings.TrimSpace(cred.Extra[name]) }
	var errs []error
	k := &keys{alchemy: f(FieldAlchemy), opensea: f(FieldOpenSea), uniswap: f(FieldUniswap)}
	var err error
	if k.evm, err = parseEVMKey(f(FieldEVM)); err != nil {
		errs = append(errs, &KeyError{FieldEVM, err.Error()})
	} else {
		k.evmAddr = crypto.PubkeyToAddress(k.evm.PublicKey)
	}
	if k.sol, err = parseSolanaKey(f(FieldSolana)); err != nil {
		errs = append(errs, &KeyError{FieldSolana, err.Error()})
	} else {
		k.solAddr = k.sol.PublicKey()
	}
	for _, a := range []struct{ field, v string }{{FieldAlchemy, k.alchemy}, {FieldOpenSea, k.opensea}, {FieldUniswap, k.uniswap}} {
		if a.v == "" && a.field == FieldUniswap {
			continue
		}
		if err := apiKeyShape(a.v); err != nil {
			errs = append(errs, &KeyError{a.field, err.Error()})
		}
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return k, nil
}

// parseEVMKey takes 64 hex digits, with or without 0x.
func parseEVMKey(s string) (*ecdsa.PrivateKey, error) {
	h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	switch {
	case s == "":
		return nil, errors.New("is required")
	case len(h) != 64:
		return nil, fmt.Errorf("must be 64 hex digits (32 bytes), with or without 0x; it has %d characters", len(h))
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, errors.New("must be hex digits only (0-9, a-f)")
	}
	k, err := crypto.ToECDSA(raw)
	if err != nil {
		return nil, errors.New("is not a valid secp256k1 private key")
	}
	return k, nil
}

// parseSolanaKey takes the 64-byte keypair as base58 (Phantom's export) or
// as a JSON array of 64 numbers (the Solana CLI's file).
func parseSolanaKey(s string) (solana.PrivateKey, error) {
	if s == "" {
		return nil, errors.New("is required")
	}
	var raw []byte
	if strings.HasPrefix(s, "[") {
		var nums []int
		if err := json.Unmarshal([]byte(s), &nums); err != nil {
			return nil, errors.New("is not a JSON array of numbers")
		}
		for _, n := range nums {
			if n < 0 || n > 255 {
				return nil, errors.New("holds a number that is not a byte")
			}
			raw = append(raw, byte(n))
		}
	} else {
		k, err := solana.PrivateKeyFromBase58(s)
		if err != nil {
			return nil, errors.New("is not base58 (the 64-byte keypair a wallet exports) nor a JSON array of 64 bytes")
		}
		raw = k
	}
	if len(raw) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("must be the 64-byte keypair (seed and public key); it has %d bytes", len(raw))
	}
	// The second half must be the public key of the first: a keypair whose
	// halves disagree would sign for another address than it shows.
	derived := ed25519.NewKeyFromSeed(raw[:32])
	if string(derived[32:]) != string(raw[32:]) {
		return nil, errors.New("is not a keypair: its public half does not match its seed")
	}
	return solana.PrivateKey(raw), nil
}

// apiKeyShape refuses a key no service would take and that could not be
// sent in a URL path or a header as is.
func apiKeyShape(s string) error {
	if s == "" {
		return errors.New("is required")
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '/' || r == '?' || r == '#' || r == '%' || r > 0x7e {
			return errors.New("holds a character an API key does not (blanks, slashes, ?, #, % or non-ASCII)")
		}
	}
	return nil
}

// short is an address cut for the account hint: 0x1234…abcd.
func short(s string) string {
	if len(s) <= 12 {
		return s
	}
	return s[:6] + "…" + s[len(s)-4:]
}
