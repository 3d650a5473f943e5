package recovery

import (
	"bytes"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

func TestOutputChunkRoundTripsRecordsOfEveryLengthClass(t *testing.T) {
	var c outputChunk
	for round, first := range []uint64{7, 300} { // the second round reuses the body
		c.reset(first)
		var want []cdc.Message
		for i, size := range []int{1, 100, 127, 128, 200, 20000, 3} {
			data := append([]byte(`"`), bytes.Repeat([]byte{'x'}, size)...)
			data = append(data, '"')
			m := cdc.NewUpdate(data, uint64(i), int64(round+1))
			want = append(want, m)
			c.add(&m)
		}
		want = append(want, cdc.NewProgress(0, 7))
		c.add(&want[len(want)-1])
		var got []cdc.Message
		scanChunkForTest(c.value([]byte("key")), func(m cdc.Message) { got = append(got, m) })
		if len(got) != len(want) || c.first != first {
			t.Fatalf("round %d: %d records from chunk %d, want %d from %d", round, len(got), c.first, len(want), first)
		}
		for i := range want {
			if !bytes.Equal(cdc.AppendJSON(nil, &got[i]), cdc.AppendJSON(nil, &want[i])) {
				t.Fatalf("round %d record %d: %s, want %s", round, i, cdc.AppendJSON(nil, &got[i]), cdc.AppendJSON(nil, &want[i]))
			}
		}
	}
}
