package wallet

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// maxUnits bounds a parsed amount: 2^256-1 base units, what an EVM word holds.
var maxUnits = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// parseAmount converts a human decimal string ("1.5") into base units with
// a token's decimals, exactly: no floating point, no rounding. More
// fractional digits than the token has, a sign, an exponent or a value
// above what the chain holds are refused.
func parseAmount(field, s string, decimals int) (*big.Int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%s is required (a decimal string such as \"1.5\")", field)
	}
	whole, frac, dotted := strings.Cut(s, ".")
	if whole == "" && frac == "" || !digits(whole) || !digits(frac) || dotted && frac == "" && whole == "" {
		return nil, fmt.Errorf("%s %q is not a plain decimal number such as \"1.5\" (no sign, exponent or separators)", field, s)
	}
	if len(frac) > decimals {
		return nil, fmt.Errorf("%s %q has %d decimals; this token has %d, so it cannot be sent exactly", field, s, len(frac), decimals)
	}
	units, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", decimals-len(frac)), 10)
	if !ok {
		return nil, fmt.Errorf("%s %q is not a number", field, s)
	}
	if units.Cmp(maxUnits) > 0 {
		return nil, fmt.Errorf("%s %q is more than the chain can represent", field, s)
	}
	return units, nil
}

// decimalShape checks an amount's shape alone, before its token's decimals
// are known.
func decimalShape(field, s string) error {
	_, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	_, err := parseAmount(field, s, len(frac))
	return err
}

// positive is parseAmount refusing zero.
func positive(field, s string, decimals int) (*big.Int, error) {
	v, err := parseAmount(field, s, decimals)
	if err == nil && v.Sign() == 0 {
		return nil, errors.New(field + " must be more than zero")
	}
	return v, err
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// formatUnits writes base units as a human decimal string, exactly, without
// trailing zeros: 1500000 with 6 decimals is "1.5".
func formatUnits(v *big.Int, decimals int) string {
	if v == nil {
		return "0"
	}
	neg := v.Sign() < 0
	s := new(big.Int).Abs(v).String()
	if decimals > 0 {
		if len(s) <= decimals {
			s = strings.Repeat("0", decimals-len(s)+1) + s
		}
		whole, frac := s[:len(s)-decimals], strings.TrimRight(s[len(s)-decimals:], "0")
		s = whole
		if frac != "" {
			s += "." + frac
		}
	}
	if neg {
		s = "-" + s
	}
	return s
}
