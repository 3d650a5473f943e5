package streamgen

import "math/bits"

// rng is a small deterministic pseudo-random generator (SplitMix64). It is
// written out here rather than taken from math/rand so that a seed names the
// same stream in every Go release: streams generated from a seed are test
// data that other people regenerate and compare.
type rng struct{ state uint64 }

// Stream constants keep the generators of different purposes apart, so that
// Gen and Mangle with the same seed draw unrelated sequences.
const (
	streamGen    uint64 = 0x6a09e667f3bcc908
	streamMangle uint64 = 0xbb67ae8584caa73b
)

func newRNG(seed int64, stream uint64) *rng {
	return &rng{state: uint64(seed) ^ stream}
}

// next returns 64 pseudo-random bits.
func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n); n must be positive. The bias of the
// multiply-shift reduction is below 2^-32 for the sizes used here.
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

// chance reports true with probability num/den.
func (r *rng) chance(num, den int) bool {
	return r.intn(den) < num
}

// weighted returns index i with probability weights[i] / sum(weights). The
// weights must not all be zero.
func (r *rng) weighted(weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.intn(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}
