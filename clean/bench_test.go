package clean

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// BenchmarkStream runs the whole pipeline (decode, receive, encode) over a
// mangled stream of about 420k messages (gen --times 500 --keys 2000 |
// mangle), from memory to io.Discard: what cdclog demangle does, without
// the files.
func BenchmarkStream(b *testing.B) {
	for _, f := range []cdc.Format{cdc.JSONL, cdc.Msgpack} {
		b.Run(f.String(), func(b *testing.B) {
			in, n := mangled(b, 500, 2000, f, false)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				r := cdc.NewReader(bytes.NewReader(in), f, "in")
				if _, err := Stream(context.Background(), r, cdc.NewWriter(io.Discard, f), Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
