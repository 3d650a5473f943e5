package clean

import (
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// TestDecoderStopsBeforeTheBadMessage: when bad input stops the input,
// the last batch's offset and line are those of the bad message's start:
// what was read before it is good.
func TestDecoderStopsBeforeTheBadMessage(t *testing.T) {
	good := `{"update":{"data":"a","time":1,"diff":1}}` + "\n"
	for _, tc := range []struct {
		name   string
		input  string
		policy cdc.ErrorPolicy
		format cdc.Format
		offset int64
		line   int64
	}{
		{"malformed line under fail", good + "\n" + good + "{oops}\n" + good, cdc.Fail, cdc.JSONL, int64(2*len(good) + 1), 3},
		{"truncated msgpack", "\x80\x81", cdc.Skip, cdc.Msgpack, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := make(chan *batch, 16)
			d := &decoder{r: cdc.NewReader(strings.NewReader(tc.input), tc.format, "in"), policy: tc.policy, pool: &batchPool{}}
			d.run(out, make(chan struct{}))
			var last *batch
			for b := range out {
				last = b
			}
			if last == nil || last.err == nil {
				t.Fatal("the bad message did not stop the input")
			}
			if last.offset != tc.offset || last.line != tc.line {
				t.Fatalf("stopped at byte %d after %d lines, want byte %d after %d lines (%v)", last.offset, last.line, tc.offset, tc.line, last.err)
			}
		})
	}
}

func TestDecoderReadsNoFurtherOnceStopped(t *testing.T) {
	good := `{"update":{"data":"a","time":1,"diff":1}}` + "\n"
	d := &decoder{r: cdc.NewReader(strings.NewReader(strings.Repeat(good, 10)), cdc.JSONL, "in"), pool: &batchPool{}}
	d.stopped.Store(true)
	b, more := d.next()
	if more || len(b.msgs) != 0 || b.err != nil {
		t.Fatalf("read %d messages (more %v, err %v) after being stopped", len(b.msgs), more, b.err)
	}
}
