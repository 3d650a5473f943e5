package streamgen

import "github.com/cdclog/cdclog/cdc"

// skipFinishOdds: in the Mixed shape, 1 in N times is left without its own
// finish, so the next finish closes two or more times at once.
const skipFinishOdds = 10

// genNaive yields a naive stream in the manner of the seed's generator: at
// each step either a random key changes by a small diff at the current time
// or (with probability 1/(keys+1)) the time finishes. A key may change
// several times within one time; the changes may cancel out. It reports
// whether it reached the stream's end.
func genNaive(o GenOptions, yield func(cdc.Message) bool) bool {
	r := newRNG(o.Seed, streamGen)
	end := o.end()
	for t := o.Start; t < end; t++ {
		for !r.chance(1, o.Keys+1) {
			if !yield(cdc.NewUpdate(keyData(r.intn(o.Keys)), t, naiveDiff(r))) {
				return false
			}
		}
		if o.Shape == Mixed && t+1 < end && r.chance(1, skipFinishOdds) {
			continue
		}
		if !yield(cdc.NewFinish(t)) {
			return false
		}
	}
	return true
}

// naiveDiff draws a naive update's diff: ±1 four times as often as ±2.
func naiveDiff(r *rng) int64 {
	diffs := [...]int64{-2, -1, 1, 2}
	return diffs[r.weighted([]int{1, 4, 4, 1})]
}
