package group_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkFirstTurn measures the time from an operator's message (the
// post, as the API makes it) to its agent's first model turn, by the plain
// rule and through a routing model that answers at once; it reports the
// p50 and p95 over b.N messages. Run it with -benchtime=20x.
func BenchmarkFirstTurn(b *testing.B) {
	for _, mode := range []string{"rule", "router"} {
		b.Run(mode, func(b *testing.B) {
			opts := envOptions{}
			if mode == "router" {
				rm := newRouter(b, func(_ int, body map[string]any) (int, string) {
					raw, _ := json.Marshal(body)
					if strings.Contains(string(raw), "by Dana.") {
						return 200, `{"recipients":["alice"],"history":20}`
					}
					return 200, `{"recipients":[],"history":1}`
				})
				opts.router = rm.router(5 * time.Second)
			}
			e := newEnv(b, opts, text, "alice")
			e.model.arrived = make(chan agentRequest, 1000)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				m := e.post(fmt.Sprintf("@alice ping %d", i))
				want := fmt.Sprintf("Answer message #%d ", m.Seq)
				for r := range e.model.arrived {
					if strings.Contains(r.Opening, want) {
						lat = append(lat, r.At.Sub(start))
						break
					}
				}
				e.waitRoute(m.ID) // the answer is posted and its routing started
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.95), "p95-ms")
		})
	}
}
