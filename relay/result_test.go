package relay

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/cdclog/cdclog/recovery"
)

// attrKeys returns the keys of attrs, space-separated.
func attrKeys(attrs []slog.Attr) string {
	keys := make([]string, len(attrs))
	for i, a := range attrs {
		keys[i] = a.Key
	}
	return strings.Join(keys, " ")
}

func TestRunCountsWhatItReadsAndCallsOnReadWithEachBatchsInput(t *testing.T) {
	msgs := stream(50)
	half := len(msgs) / 2
	for _, withSink := range []bool{false, true} {
		p, _ := openProcessor(t)
		a, b := &sliceSource{name: "a", msgs: msgs[:half]}, &sliceSource{name: "b", msgs: msgs[half:]}
		var (
			mu      sync.Mutex
			perSrc  = map[string]int{}
			optRead int
		)
		r := &Run{InTurn: []recovery.Source{a, b}, Logger: quiet,
			Options: func(recovery.Source) recovery.IngestOptions {
				return recovery.IngestOptions{OnRead: func(b *recovery.SourceBatch) { optRead += b.Len() }}
			},
			OnRead: func(src recovery.Source, b *recovery.SourceBatch) {
				mu.Lock()
				defer mu.Unlock()
				perSrc[src.Name()] += b.Len()
			}}
		if withSink {
			r.Sink = newSink(p, &memOutput{})
		}
		res, err := r.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Read != uint64(len(msgs)) || r.Read() != res.Read || optRead != len(msgs) ||
			perSrc["a"] != half || perSrc["b"] != len(msgs)-half {
			t.Errorf("read %d (Read() %d, Options' OnRead %d, per input %v), want %d", res.Read, r.Read(), optRead, perSrc, len(msgs))
		}
		want := "messages accepted duplicates stale skipped quarantined records_out"
		if withSink {
			want += " sink sink_acked sink_unsent"
			if res.Sink != "mem:out" || res.SinkAcked == 0 || res.SinkAcked != uint64(res.Committed.Output) || res.Unsent != 0 {
				t.Errorf("sink %q acked %d unsent %d, want mem:out with all %d records", res.Sink, res.SinkAcked, res.Unsent, res.Committed.Output)
			}
		}
		if got := attrKeys(res.LogAttrs()); got != want {
			t.Errorf("LogAttrs keys %q, want %q", got, want)
		}
		if v := res.LogAttrs()[0].Value.Uint64(); v != res.Read {
			t.Errorf("messages=%d, want %d", v, res.Read)
		}
	}
}
