package x_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/x"
	"github.com/guilds/guilds/internal/connectors"
)

// cannedPage answers every request with one 30-post search page, from
// memory.
type cannedPage []byte

func (c cannedPage) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(c)), Request: r}, nil
}

func searchPage(b *testing.B) cannedPage {
	raw, err := json.Marshal(postPage(url.Values{"max_results": {"30"}}, 45, "XDevelopers"))
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// A 30-row search answered as TSV, HTTP excluded: decode the page, render.
func BenchmarkSearchTSV(b *testing.B) {
	c := adapters.Conn{HTTP: &http.Client{Transport: searchPage(b)}, BaseURL: "http://svc.test/2", Cred: connectors.Credential{AccessToken: goodKey}}
	args := json.RawMessage(`{"query":"bench","limit":30}`)
	b.ReportAllocs()
	var out string
	for b.Loop() {
		var err error
		if out, err = (x.Adapter{}).Call(context.Background(), c, "search", args); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out)), "answer-bytes")
}

// The same page passed on as the service's JSON, re-marshalled.
func BenchmarkSearchJSON(b *testing.B) {
	page := searchPage(b)
	b.ReportAllocs()
	var size int
	for b.Loop() {
		var v any
		if err := json.Unmarshal(page, &v); err != nil {
			b.Fatal(err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "answer-bytes")
}
