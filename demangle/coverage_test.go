package demangle

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCoverageMatchesASetOfTimes adds random ranges, some adjacent, some
// overlapping, and trims now and then, checking every query against a plain
// set of covered times, with few spans and with many (the scan and the
// binary search).
func TestCoverageMatchesASetOfTimes(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		const horizon = 400
		var c coverage
		covered := map[uint64]bool{}
		floor := uint64(0) // times below it have been trimmed
		for step := range 60 {
			first := floor + uint64(rng.IntN(horizon))
			last := first + uint64(rng.IntN(1+rng.IntN(8)))
			c.add(first, last)
			for x := first; x <= last; x++ {
				covered[x] = true
			}
			if step%15 == 14 {
				floor += uint64(rng.IntN(40))
				c.trim(floor)
			}
			checkCoverage(t, seed, &c, covered, floor, floor+horizon+10)
		}
	}
}

func checkCoverage(t *testing.T, seed uint64, c *coverage, covered map[uint64]bool, from, to uint64) {
	t.Helper()
	for i := 1; i < len(c.spans); i++ {
		if c.spans[i].first <= c.spans[i-1].last+1 {
			t.Fatalf("seed %d: spans %v and %v overlap or touch", seed, c.spans[i-1], c.spans[i])
		}
	}
	for x := from; x < to; x++ {
		if c.covers(x) != covered[x] {
			t.Fatalf("seed %d: covers(%d) = %v with spans %v", seed, x, c.covers(x), c.spans)
		}
		want := covered[x] && covered[x+1] && covered[x+2]
		if c.contains(x, x+2) != want {
			t.Fatalf("seed %d: contains(%d, %d) = %v with spans %v", seed, x, x+2, !want, c.spans)
		}
	}
}

func TestCoverageReachesTheLastTime(t *testing.T) {
	var c coverage
	c.add(5, 9)
	c.add(math.MaxUint64-3, math.MaxUint64)
	c.add(10, math.MaxUint64-4)
	if len(c.spans) != 1 || !c.contains(5, math.MaxUint64) || c.covers(4) {
		t.Fatalf("spans %v", c.spans)
	}
}

// TestCoverageAddAtMatchesASetOfTimes covers single times by addAt, where
// find says they are not covered, among ranges added by add, checking
// every query against a plain set of covered times; the last time too.
func TestCoverageAddAtMatchesASetOfTimes(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 8))
		const horizon = 200
		var c coverage
		covered := map[uint64]bool{}
		for range 80 {
			x := uint64(rng.IntN(horizon))
			if rng.IntN(4) == 0 {
				last := x + uint64(rng.IntN(4))
				c.add(x, last)
				for y := x; y <= last; y++ {
					covered[y] = true
				}
				continue
			}
			if i, ok := c.find(x); !ok {
				c.addAt(i, x)
				covered[x] = true
			}
			checkCoverage(t, seed, &c, covered, 0, horizon+10)
		}
	}
	var c coverage
	c.add(math.MaxUint64-1, math.MaxUint64-1)
	for _, x := range []uint64{math.MaxUint64, math.MaxUint64 - 2} {
		i, ok := c.find(x)
		if ok {
			t.Fatalf("%d covered in %v", x, c.spans)
		}
		c.addAt(i, x)
	}
	if len(c.spans) != 1 || c.spans[0] != (span{math.MaxUint64 - 2, math.MaxUint64}) {
		t.Fatalf("spans %v", c.spans)
	}
}
