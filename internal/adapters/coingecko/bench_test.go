package coingecko_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/guilds/guilds/internal/adapters/coingecko"
)

// The movers answer at its 30-row cap per side: the adapter's TSV against
// handing the model the service's JSON re-marshalled. Both include the
// local HTTP round trip; answer-bytes is what the model would read.
//
//	go test -run '^$' -bench Movers -benchmem ./internal/adapters/coingecko/
func BenchmarkMoversTSV(b *testing.B) {
	f := newFakeGecko(b)
	c := conn(f.URL, goodKey)
	args := json.RawMessage(`{"duration":"24h","limit":30}`)
	var out string
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = (coingecko.Adapter{}).Call(context.Background(), c, "movers", args); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out)), "answer-bytes")
}

func BenchmarkMoversJSON(b *testing.B) {
	f := newFakeGecko(b)
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, f.URL+"/coins/top_gainers_losers?vs_currency=usd&duration=24h", nil)
		req.Header.Set("x-cg-pro-api-key", goodKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			b.Fatal(err)
		}
		if out, err = json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out)), "answer-bytes")
}
