package sandboxtest

import (
	"math"
	"slices"
	"testing"
	"time"
)

// Latencies collects the durations a benchmark measures one by one, for
// percentiles that b's mean (ns/op) hides.
type Latencies []time.Duration

// Percentile returns the p-th percentile (0 < p ≤ 100), nearest rank.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Report adds p50 and p99 in milliseconds, named prefix+"p50-ms" and
// prefix+"p99-ms", to the benchmark's output.
func (l Latencies) Report(b *testing.B, prefix string) {
	b.ReportMetric(ms(l.Percentile(50)), prefix+"p50-ms")
	b.ReportMetric(ms(l.Percentile(99)), prefix+"p99-ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
