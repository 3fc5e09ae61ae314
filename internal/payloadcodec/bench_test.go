package payloadcodec_test

import (
	"fmt"
	"strings"
	"testing"

	"go.temporal.io/sdk/converter"

	"github.com/guilds/guilds/internal/payloadcodec"
	"github.com/guilds/guilds/internal/secret"
)

// A stamped tool result of 4 KiB and one of 64 KiB (the default cap), turned
// into a payload and back, as the worker does for every activity result:
// the SDK's plain JSON converter against the same converter behind the codec.
func BenchmarkRoundTrip(b *testing.B) {
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		b.Fatal(err)
	}
	sealed, _ := payloadcodec.New(kr, true).Converters()
	for _, size := range []int{4 << 10, 64 << 10} {
		result := strings.Repeat("a tool result line\n", size/19)
		for _, c := range []struct {
			name string
			dc   converter.DataConverter
		}{{"plain", converter.GetDefaultDataConverter()}, {"sealed", sealed}} {
			b.Run(fmt.Sprintf("%s/%dKiB", c.name, size>>10), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(result)))
				for b.Loop() {
					p, err := c.dc.ToPayload(result)
					if err != nil {
						b.Fatal(err)
					}
					var out string
					if err := c.dc.FromPayload(p, &out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
