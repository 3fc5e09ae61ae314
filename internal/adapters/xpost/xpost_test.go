package xpost_test

import (
	"testing"

	"github.com/guilds/guilds/internal/adapters/xpost"
)

func TestID(t *testing.T) {
	for in, want := range map[string]string{
		"1850000000000000000":          "1850000000000000000",
		" 42 ":                         "42",
		"https://x.com/jack/status/20": "20",
		"https://twitter.com/jack/statuses/21?s=46":      "21",
		"https://nitter.example/jack/status/22#m":        "22",
		"https://x.com/i/web/status/1850000000000000001": "1850000000000000001",
	} {
		if got, err := xpost.ID(in); err != nil || got != want {
			t.Errorf("ID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "https://x.com/jack", "12a", "https://x.com/jack/status/"} {
		if _, err := xpost.ID(bad); err == nil {
			t.Errorf("ID(%q) accepted", bad)
		}
	}
}
