package coingecko

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// num formats a number for a table cell: whole units from 1000 up (market
// caps, volumes, supplies), six significant digits below, never an exponent.
// A nil pointer (CoinGecko's null) is an empty cell.
func num(v *float64) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return ""
	}
	x := *v
	if math.Abs(x) >= 1000 {
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	if err != nil {
		r = x
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// flexNum is a number CoinGecko sends either as a JSON number or as a
// numeric string (supply charts, some trending fields).
// A string that is no number ("N/A") is kept as it came.
type flexNum struct {
	v   *float64
	raw string
}

func (f *flexNum) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(strings.NewReplacer("$", "", ",", "").Replace(unq))
		if s == "" {
			return nil
		}
		if x, err := strconv.ParseFloat(s, 64); err == nil {
			f.v = &x
		} else {
			f.raw = unq
		}
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	f.v = &x
	return nil
}

func (f flexNum) String() string {
	if f.v == nil {
		return f.raw
	}
	return num(f.v)
}

func unixTime(s int64) string {
	if s <= 0 {
		return ""
	}
	return time.Unix(s, 0).UTC().Format("2006-01-02T15:04Z")
}

// CoinGecko ids are lower-case words joined by hyphens (usd-coin,
// wrapped-bitcoin); a few carry dots or underscores.
var coinIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)

func coinID(id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if !coinIDPattern.MatchString(id) {
		return "", fmt.Errorf("%q is not a CoinGecko coin id (ids look like bitcoin or usd-coin; find them with search)", id)
	}
	return id, nil
}

func coinPath(id, suffix string) string { return "/coins/" + url.PathEscape(id) + suffix }

var currencyPattern = regexp.MustCompile(`^[a-z0-9]{2,10}$`)

func vsCurrency(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "usd", nil
	}
	if !currencyPattern.MatchString(s) {
		return "", fmt.Errorf("%q is not a quote currency (usd, eur, btc, …)", s)
	}
	return s, nil
}
