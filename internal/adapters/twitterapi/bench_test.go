package twitterapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/twitterapi"
	"github.com/guilds/guilds/internal/connectors"
)

// cannedPages answers the two search pages a 30-row call reads, from memory.
type cannedPages map[string][]byte

func (c cannedPages) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c[r.URL.Query().Get("cursor")])), Request: r}, nil
}

func searchPages(b *testing.B) cannedPages {
	pages := cannedPages{}
	for _, cursor := range []string{"", "p20"} {
		raw, err := json.Marshal(tweetPage(cursor, 45, "tweets", "bench"))
		if err != nil {
			b.Fatal(err)
		}
		pages[cursor] = raw
	}
	return pages
}

// A 30-row search answered as TSV, HTTP excluded: decode two pages, render.
func BenchmarkSearchTSV(b *testing.B) {
	pages := searchPages(b)
	c := adapters.Conn{HTTP: &http.Client{Transport: pages}, BaseURL: "http://svc.test", Cred: connectors.Credential{AccessToken: goodKey}}
	args := json.RawMessage(`{"query":"bench","limit":30}`)
	b.ReportAllocs()
	var out string
	for b.Loop() {
		var err error
		if out, err = (twitterapi.Adapter{}).Call(context.Background(), c, "search", args); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out)), "answer-bytes")
}

// The same two pages passed on as the service's JSON, re-marshalled.
func BenchmarkSearchJSON(b *testing.B) {
	pages := searchPages(b)
	b.ReportAllocs()
	var size int
	for b.Loop() {
		size = 0
		for _, raw := range pages {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				b.Fatal(err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			size += len(out)
		}
	}
	b.ReportMetric(float64(size), "answer-bytes")
}
