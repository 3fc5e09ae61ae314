package alchemy_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"
)

// A 30-row holdings answer as the adapter's TSV against the service's JSON
// passed through as is (decoded and encoded again); bytes/answer is what a
// model would read.
func BenchmarkHoldings30(b *testing.B) {
	f := newFixture(b)
	args := json.RawMessage(`{"owner":"` + ownerAddr + `","limit":30}`)

	b.Run("tsv", func(b *testing.B) {
		b.ReportAllocs()
		conn := f.conn(goodKey)
		var n int
		for b.Loop() {
			out, err := f.a.Call(context.Background(), conn, "holdings", args)
			if err != nil {
				b.Fatal(err)
			}
			n = len(out)
		}
		b.ReportMetric(float64(n), "bytes/answer")
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		client := f.svc.client()
		var n int
		for b.Loop() {
			resp, err := client.Get(catalogURL + "/" + goodKey + "/getNFTsForOwner?owner=" + ownerAddr + "&pageSize=30&withMetadata=true")
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
