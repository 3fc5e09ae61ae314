package pinnedprices

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sectionTitle heads the prices part of a run's system prompt.
const sectionTitle = "State prices (USD, at run start):"

// Section is the text shown to the model: one line per coin, in the login's
// order. A coin without a price says so.
func Section(coins []Coin, prices map[string]Price) string {
	var b strings.Builder
	b.WriteString(sectionTitle)
	for _, c := range coins {
		b.WriteString("\n")
		b.WriteString(label(c))
		p, ok := prices[c.ID]
		if !ok {
			b.WriteString(": not quoted")
			continue
		}
		b.WriteString(": ")
		b.WriteString(formatUSD(p.USD))
		if p.Change24h != nil {
			fmt.Fprintf(&b, " (%+.1f%% 24h)", *p.Change24h)
		}
	}
	return b.String()
}

// UnavailableSection stands in for the prices when CoinGecko could not be
// asked; the run goes on without them.
func UnavailableSection() string {
	return sectionTitle + " unavailable (CoinGecko could not be asked)"
}

func label(c Coin) string {
	sym := strings.ToUpper(c.Symbol)
	switch {
	case sym == "" && c.Name == "":
		return c.ID
	case sym == "":
		return c.Name
	case c.Name == "":
		return sym
	}
	return sym + " " + c.Name
}

// formatUSD keeps cents for prices of a dollar or more and four significant
// digits below.
func formatUSD(v float64) string {
	if v >= 1 || v <= 0 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	decimals := int(math.Ceil(-math.Log10(v))) + 3
	if decimals > 12 {
		decimals = 12
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
