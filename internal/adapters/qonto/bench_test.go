package qonto_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The missing-invoice list as the adapter's TSV against the service's
// transactions JSON passed through as is (decoded and encoded again). The
// two answers hold different row counts, so bytes/row is the comparison.
func BenchmarkMissingInvoices(b *testing.B) {
	f := newFixture(b)
	args := json.RawMessage(`{"limit":30}`)

	b.Run("tsv", func(b *testing.B) {
		b.ReportAllocs()
		var out string
		for b.Loop() {
			var err error
			out, err = f.a.Call(context.Background(), f.conn(goodKey), "list_missing_invoices", args)
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(out))/float64(strings.Count(out, "\n")-1), "bytes/row")
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		var n, rows int
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodGet, f.svc.URL+"/v2/transactions?bank_account_id="+mainID+"&status[]=completed&side=debit&per_page=30", nil)
			req.Header.Set("Authorization", goodKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var v struct {
				Transactions []any `json:"transactions"`
			}
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
			out, _ := json.Marshal(v.Transactions)
			n, rows = len(out), len(v.Transactions)
		}
		b.ReportMetric(float64(n)/float64(rows), "bytes/row")
	})
}
