package dexpaprika

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// num is a JSON number the service may also send as a string (swap amounts
// are); null is empty. It prints without exponent notation.
type num string

func (n *num) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*n = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = num(strings.TrimSpace(s))
	default:
		*n = num(b)
	}
	return nil
}

func (n num) String() string {
	s := string(n)
	if strings.ContainsAny(s, "eE") {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	return s
}

func (n num) float() (float64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil
}

// The answer shapes below keep only what the tools print; descriptions,
// websites, explorers and image flags are left out on purpose.

type tokenRef struct {
	ID     string `json:"id"`
	Symbol string `json:"symbol"`
}

type period struct {
	VolumeUSD          num `json:"volume_usd"`
	Txns               num `json:"txns"`
	Buys               num `json:"buys"`
	Sells              num `json:"sells"`
	LastPriceUSDChange num `json:"last_price_usd_change"`
}

type searchAnswer struct {
	Tokens []struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		Symbol         string `json:"symbol"`
		Chain          string `json:"chain"`
		PriceUSD       num    `json:"price_usd"`
		VolumeUSD      num    `json:"volume_usd"`
		PriceUSDChange num    `json:"price_usd_change"`
	} `json:"tokens"`
	Pools []struct {
		ID        string     `json:"id"`
		DexName   string     `json:"dex_name"`
		Chain     string     `json:"chain"`
		PriceUSD  num        `json:"price_usd"`
		VolumeUSD num        `json:"volume_usd"`
		Tokens    []tokenRef `json:"tokens"`
	} `json:"pools"`
	Dexes []struct {
		ID      string `json:"id"`
		DexID   string `json:"dex_id"`
		Name    string `json:"name"`
		DexName string `json:"dex_name"`
		Chain   string `json:"chain"`
	} `json:"dexes"`
}

type tokenAnswer struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Symbol      string `json:"symbol"`
	Chain       string `json:"chain"`
	Decimals    num    `json:"decimals"`
	TotalSupply num    `json:"total_supply"`
	AddedAt     string `json:"added_at"`
	LastUpdated string `json:"last_updated"`
	Summary     struct {
		PriceUSD     num    `json:"price_usd"`
		FDV          num    `json:"fdv"`
		LiquidityUSD num    `json:"liquidity_usd"`
		Pools        num    `json:"pools"`
		Day          period `json:"24h"`
	} `json:"summary"`
}

type priceAnswer []struct {
	ID          string `json:"id"`
	PriceUSD    num    `json:"price_usd"`
	LastUpdated string `json:"last_updated"`
}

type poolAnswer struct {
	ID           string     `json:"id"`
	Chain        string     `json:"chain"`
	DexName      string     `json:"dex_name"`
	Fee          num        `json:"fee"`
	CreatedAt    string     `json:"created_at"`
	LastPrice    num        `json:"last_price"`
	LastPriceUSD num        `json:"last_price_usd"`
	PriceTime    string     `json:"price_time"`
	Tokens       []tokenRef `json:"tokens"`
	Day          period     `json:"24h"`
	Hour         period     `json:"1h"`
}

type poolsAnswer struct {
	Results []struct {
		ID                       string     `json:"id"`
		DexName                  string     `json:"dex_name"`
		CreatedAt                string     `json:"created_at"`
		VolumeUSD24h             num        `json:"volume_usd_24h"`
		LiquidityUSD             num        `json:"liquidity_usd"`
		Transactions24h          num        `json:"transactions_24h"`
		PriceUSD                 num        `json:"price_usd"`
		PriceChangePercentage24h num        `json:"price_change_percentage_24h"`
		Tokens                   []tokenRef `json:"tokens"`
	} `json:"results"`
}

type candle struct {
	TimeOpen string `json:"time_open"`
	Open     num    `json:"open"`
	High     num    `json:"high"`
	Low      num    `json:"low"`
	Close    num    `json:"close"`
	Volume   num    `json:"volume"`
}

type swapsAnswer struct {
	Transactions []struct {
		ID           string `json:"id"`
		Sender       string `json:"sender"`
		Token0       string `json:"token_0"`
		Token1       string `json:"token_1"`
		Token0Symbol string `json:"token_0_symbol"`
		Token1Symbol string `json:"token_1_symbol"`
		Amount0      num    `json:"amount_0"`
		Amount1      num    `json:"amount_1"`
		Volume0      num    `json:"volume_0"`
		Volume1      num    `json:"volume_1"`
		Price0USD    num    `json:"price_0_usd"`
		Price1USD    num    `json:"price_1_usd"`
		CreatedAt    string `json:"created_at"`
	} `json:"transactions"`
}

// pair names a pool's tokens by symbol, or by address when the answer has
// no symbol.
func pair(ts []tokenRef) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Symbol
		if names[i] == "" {
			names[i] = t.ID
		}
	}
	return strings.Join(names, "/")
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
