package dexpaprika

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/guilds/guilds/internal/adapters"
)

// decode reads a tool's arguments; none at all is an empty object.
func decode(args json.RawMessage, into any) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	if err := json.Unmarshal(args, into); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

var networkPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,47}$`)

// networkAliases maps short names models tend to use to DexPaprika's ids.
var networkAliases = map[string]string{
	"eth": "ethereum", "mainnet": "ethereum", "sol": "solana", "bnb": "bsc",
	"binance": "bsc", "matic": "polygon", "arb": "arbitrum", "op": "optimism", "avax": "avalanche",
}

func network(raw string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(raw))
	if alias, ok := networkAliases[n]; ok {
		n = alias
	}
	if !networkPattern.MatchString(n) {
		return "", fmt.Errorf("unknown network %q: use a DexPaprika network id such as ethereum, solana, base, bsc, polygon or arbitrum", raw)
	}
	return n, nil
}

// address accepts EVM, Solana, TON, Sui and similar ids; it is path-escaped
// when sent, so only blanks, control characters and dot segments are refused.
func address(what, raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", fmt.Errorf("%s is required", what)
	case s == "." || s == ".." || len(s) > 200 || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return "", fmt.Errorf("%s %q is not an address", what, raw)
	}
	return s, nil
}

// intervals are the candle widths the service accepts.
var intervals = map[string]time.Duration{
	"1m": time.Minute, "5m": 5 * time.Minute, "10m": 10 * time.Minute, "15m": 15 * time.Minute,
	"30m": 30 * time.Minute, "1h": time.Hour, "6h": 6 * time.Hour, "12h": 12 * time.Hour, "24h": 24 * time.Hour,
}

func interval(raw string) (string, time.Duration, error) {
	s := strings.ToLower(strings.TrimSpace(raw))
	switch s {
	case "":
		s = "1h"
	case "1d":
		s = "24h"
	}
	d, ok := intervals[s]
	if !ok {
		return "", 0, fmt.Errorf("unknown interval %q: use 1m, 5m, 10m, 15m, 30m, 1h, 6h, 12h or 24h", raw)
	}
	return s, d, nil
}

var relativePattern = regexp.MustCompile(`^-(\d{1,6})([smhdw])$`)

// start reads a window start: RFC 3339, a date, Unix seconds or an offset
// such as -24h or -7d; empty is 24 hours before now.
func start(raw string, now time.Time) (time.Time, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return now.Add(-24 * time.Hour), nil
	}
	if m := relativePattern.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		return now.Add(-time.Duration(n) * unit), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return checkPast(t, now, raw)
		}
	}
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil && secs > 0 {
		return checkPast(time.Unix(secs, 0), now, raw)
	}
	return time.Time{}, fmt.Errorf("start %q is not a time: use an ISO date or time (2025-01-31, 2025-01-31T12:00:00Z), Unix seconds, or an offset such as -24h or -7d", raw)
}

func checkPast(t, now time.Time, raw string) (time.Time, error) {
	if !t.Before(now) {
		return time.Time{}, fmt.Errorf("start %q is not in the past", raw)
	}
	return t, nil
}

// maxCandles is the most candles the service returns for one request.
const maxCandles = 1000

// candles is how many candles of width step cover the time since from.
func candles(from, now time.Time, step time.Duration) int {
	n := int(math.Ceil(float64(now.Sub(from)) / float64(step)))
	return max(1, min(n, maxCandles))
}

// rows reads an optional limit argument.
func rows(limit float64) int { return adapters.Rows(int(limit)) }
