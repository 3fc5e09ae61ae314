package gmail_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/gmail"
	"github.com/guilds/guilds/internal/connectors"
)

// cannedSearch answers a 30-thread search and its thread reads from memory.
type cannedSearch struct {
	list    []byte
	threads map[string][]byte
}

func (c cannedSearch) RoundTrip(r *http.Request) (*http.Response, error) {
	body := c.list
	if id, ok := strings.CutPrefix(r.URL.Path, "/gmail/v1/users/me/threads/"); ok {
		body = c.threads[id]
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
}

func searchAnswers(b *testing.B) cannedSearch {
	var ts []any
	c := cannedSearch{threads: map[string][]byte{}}
	meta := url.Values{"format": {"metadata"}, "metadataHeaders": {"From", "Subject"}}
	for i := range adapters.MaxRows {
		ts = append(ts, map[string]any{"id": threadID(i), "snippet": "It&#39;s a thread", "historyId": "9000"})
		raw, err := json.Marshal(map[string]any{"id": threadID(i), "historyId": "9000",
			"messages": []any{messageJSON(i, 0, meta), messageJSON(i, 1, meta)}})
		if err != nil {
			b.Fatal(err)
		}
		c.threads[threadID(i)] = raw
	}
	var err error
	if c.list, err = json.Marshal(map[string]any{"threads": ts, "resultSizeEstimate": 200}); err != nil {
		b.Fatal(err)
	}
	return c
}

// A 30-row search answered as TSV, HTTP excluded: decode the list and the
// thread reads, render.
func BenchmarkSearchTSV(b *testing.B) {
	c := adapters.Conn{HTTP: &http.Client{Transport: searchAnswers(b)}, BaseURL: "http://svc.test/gmail/v1", Cred: connectors.Credential{AccessToken: goodToken}}
	args := json.RawMessage(`{"query":"bench","limit":30}`)
	b.ReportAllocs()
	var out string
	for b.Loop() {
		var err error
		if out, err = (gmail.Adapter{}).Call(context.Background(), c, "search_threads", args); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out)), "answer-bytes")
}

// The same answers passed on as the service's JSON, re-marshalled.
func BenchmarkSearchJSON(b *testing.B) {
	c := searchAnswers(b)
	b.ReportAllocs()
	var size int
	for b.Loop() {
		size = 0
		for _, raw := range append([][]byte{c.list}, mapValues(c.threads)...) {
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

func mapValues(m map[string][]byte) [][]byte {
	out := make([][]byte, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
