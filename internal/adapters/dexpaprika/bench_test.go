package dexpaprika_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// A 30-row pools answer as the adapter's TSV against the service's JSON
// passed through as is (decoded and encoded again); bytes/answer is what a
// model would read.
func BenchmarkPools30(b *testing.B) {
	f := fixture{pub: newService(b, false), a: newFixtureAdapter()}
	args := json.RawMessage(`{"network":"ethereum","limit":30}`)

	b.Run("tsv", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			out, err := f.a.Call(context.Background(), f.conn(freeKey), "pools", args)
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		b.ReportMetric(float64(n), "bytes/answer")
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodGet, f.pub.URL+"/networks/ethereum/pools/search?limit=30", nil)
			req.Header.Set("Authorization", freeKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
			out, _ := json.Marshal(v)
			n = len(out)
		}
		b.ReportMetric(float64(n), "bytes/answer")
	})
}
