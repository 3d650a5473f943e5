package main

import (
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// TestReadBatchesStopsBeforeTheBadMessage: when bad input stops the input,
// the last batch's offset and line (which ingest commits as where to
// resume) are those of the bad message's start, so that a rerun meets it
// again instead of resuming past it.
func TestReadBatchesStopsBeforeTheBadMessage(t *testing.T) {
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
			out := make(chan *inputBatch, 16)
			readBatches(cdc.NewReader(strings.NewReader(tc.input), tc.format, "in"), tc.policy, out, make(chan struct{}), &batchPool{})
			var last *inputBatch
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
