package jetstream

import (
	"slices"
	"testing"

	"github.com/cdclog/cdclog/broker"
)

func records(sizes ...int) []broker.Outgoing {
	var out []broker.Outgoing
	for i, n := range sizes {
		out = append(out, broker.Outgoing{Seq: uint64(i + 1), Value: make([]byte, n)})
	}
	return out
}

func repeat(n, size int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = size
	}
	return s
}

func TestSplitKeepsOrderWithinTheBoundsInEvenBatches(t *testing.T) {
	for _, c := range []struct {
		name          string
		sizes         []int
		msgs, bytes   int
		want          []int // records per batch
		wantMaxValues int   // largest sum of values in a batch, 0: unchecked
	}{
		{name: "none", sizes: nil, msgs: 1000, bytes: 1 << 20, want: nil},
		{name: "one", sizes: []int{10}, msgs: 1000, bytes: 1 << 20, want: []int{1}},
		{name: "within both bounds", sizes: repeat(1000, 50), msgs: 1000, bytes: 1 << 20, want: []int{1000}},
		{name: "the forwarder's 4096 in five even batches", sizes: repeat(4096, 50), msgs: 1000, bytes: 1 << 20, want: []int{820, 820, 820, 820, 816}},
		{name: "1001 in two halves", sizes: repeat(1001, 50), msgs: 1000, bytes: 1 << 20, want: []int{501, 500}},
		{name: "bytes bind first", sizes: repeat(10, 100), msgs: 1000, bytes: 250, want: []int{2, 2, 2, 2, 2}, wantMaxValues: 250},
		{name: "a value larger than the byte bound goes alone", sizes: []int{10, 500, 10, 10}, msgs: 1000, bytes: 100, want: []int{1, 1, 2}},
		{name: "batches of one", sizes: repeat(3, 5), msgs: 1, bytes: 1 << 20, want: []int{1, 1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := records(c.sizes...)
			batches := split(recs, c.msgs, c.bytes)
			var got []int
			var joined []broker.Outgoing
			for _, b := range batches {
				got = append(got, len(b))
				joined = append(joined, b...)
				values := 0
				for _, r := range b {
					values += len(r.Value)
				}
				if len(b) > c.msgs {
					t.Errorf("a batch of %d records, bound %d", len(b), c.msgs)
				}
				if c.wantMaxValues > 0 && values > c.wantMaxValues {
					t.Errorf("a batch of %d bytes of values, bound %d", values, c.wantMaxValues)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("batches of %v records, want %v", got, c.want)
			}
			if len(joined) != len(recs) {
				t.Fatalf("the batches hold %d records of %d", len(joined), len(recs))
			}
			for i := range joined {
				if joined[i].Seq != recs[i].Seq {
					t.Fatalf("record %d of the batches is %d", i, joined[i].Seq)
				}
			}
		})
	}
}

func TestBatchLimitAfterARefusalIsTheServersLimitOrHalf(t *testing.T) {
	for _, c := range []struct {
		description string
		n, want     int
	}{
		{"atomic publish batch is too large: 100", 820, 100},
		{"atomic publish batch is too large: 1000", 820, 410}, // a limit not below the batch says nothing
		{"atomic publish batch is too large", 820, 410},
		{"atomic publish batch is too large: {size}", 3, 1},
		{"", 1, 1},
	} {
		if got := batchLimit(c.description, c.n); got != c.want {
			t.Errorf("batchLimit(%q, %d) = %d, want %d", c.description, c.n, got, c.want)
		}
	}
}
