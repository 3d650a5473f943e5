package streamgen

import "github.com/cdclog/cdclog/cdc"

// Odds of the Mixed shape's variations, as 1 in N.
const (
	// batchOdds: a statement covers 2 to maxBatch times at once.
	batchOdds = 10
	maxBatch  = 4
	// restateOdds: after a statement, the counts of the last few times
	// are stated again in one re-batched statement.
	restateOdds = 16
)

// genCDC yields a consolidated CDC stream: for each time, the updates of
// the keys that change (in key order), then progress for that time. It
// reports whether it reached the stream's end (rather than the consumer
// stopping).
func genCDC(o GenOptions, yield func(cdc.Message) bool) bool {
	r := newRNG(o.Seed, streamGen)
	var hist history
	end := o.end()
	for t := o.Start; t < end; {
		k := uint64(1)
		if o.Shape == Mixed && r.chance(1, batchOdds) {
			k = min(uint64(2+r.intn(maxBatch-1)), end-t)
		}
		var counts []cdc.Count
		for i := range k {
			n, ok := yieldTime(r, o.Keys, t+i, yield)
			if !ok {
				return false
			}
			hist.add(t+i, n)
			if n > 0 {
				counts = append(counts, cdc.Count{Time: t + i, Count: n})
			}
		}
		if !yield(cdc.NewProgress(t, t+k, counts...)) {
			return false
		}
		t += k
		if o.Shape == Mixed && r.chance(1, restateOdds) && hist.len() > 1 {
			if !yield(hist.restate(2 + r.intn(hist.len()-1))) {
				return false
			}
		}
	}
	return true
}

// yieldTime draws each key's change at time t and yields the non-zero ones.
// It returns how many it yielded, and false if the consumer stopped.
func yieldTime(r *rng, keys int, t uint64, yield func(cdc.Message) bool) (uint64, bool) {
	var n uint64
	for key := range keys {
		diff := cdcDiff(r)
		if diff == 0 {
			continue
		}
		if !yield(cdc.NewUpdate(keyData(key), t, diff)) {
			return n, false
		}
		n++
	}
	return n, true
}

// cdcDiff draws the change a key undergoes at one time, with the seed
// generator's distribution: 70% none, 20% ±1, 10% ±2.
func cdcDiff(r *rng) int64 {
	diffs := [...]int64{-2, -1, 0, 1, 2}
	return diffs[r.weighted([]int{5, 10, 70, 10, 5})]
}

// historyLen is how many recent times a history remembers.
const historyLen = 8

// history remembers the update counts of the most recent consecutive times,
// so that they can be stated again.
type history struct {
	counts [historyLen]uint64
	last   uint64 // the most recent time added
	n      int    // how many of counts are filled
}

func (h *history) add(t, count uint64) {
	h.counts[t%historyLen] = count
	h.last = t
	h.n = min(h.n+1, historyLen)
}

func (h *history) len() int { return h.n }

// restate returns a progress statement covering the last j remembered times
// (1 <= j <= len()) with their counts.
func (h *history) restate(j int) cdc.Message {
	lower := h.last + 1 - uint64(j)
	var counts []cdc.Count
	for t := lower; t <= h.last; t++ {
		if c := h.counts[t%historyLen]; c > 0 {
			counts = append(counts, cdc.Count{Time: t, Count: c})
		}
	}
	return cdc.NewProgress(lower, h.last+1, counts...)
}
