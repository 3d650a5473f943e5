package demangle

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
)

// sortByKeys is the number of updates beyond which a time is sorted
// with sort prefixes (sortCanonical) rather than by comparing data.
const sortByKeys = 64

// sortCanonical sorts a complete time's updates in canonical order (by
// data bytes, then diff), in place, and gives up their positions: each
// update's line then holds its sort prefix (see sortPrefix), so that most
// comparisons are one of integers, and nothing may ask for the positions
// again. That holds for the frontier's time once its release starts: it
// is complete, so no message about it can be a violation naming one of
// its updates; a push while its release is owed finishes the release
// first; it is never shed; and MarshalBinary refuses while a release is
// owed.
//
// Sorting a million updates by comparing their data was most of the time
// a one-time stream of a million updates took to release
// (BenchmarkReceiverOneBigTime); integer prefixes, past the prefix all
// the data share (`{"id":` and the like), cost a fraction of it. Sorting
// the updates themselves, rather than keys that stand for them, costs no
// memory: in a time of ten million updates the keys (32 bytes each, with
// the data's place and the diff so that emitting did not read the updates
// again at random) were 320 MB on top of the updates' 400 MB. Emitting
// then reads the updates in order.
func sortCanonical(a *arena, updates []heldUpdate) {
	lcp := commonPrefix(a, updates)
	for i := range updates {
		u := &updates[i]
		u.setSortPrefix(prefixAt(a.data(u), lcp))
	}
	slices.SortFunc(updates, func(x, y heldUpdate) int {
		if c := cmp.Compare(x.sortPrefix(), y.sortPrefix()); c != 0 {
			return c
		}
		if c := bytes.Compare(tail(a.data(&x), lcp+8), tail(a.data(&y), lcp+8)); c != 0 {
			return c
		}
		return cmp.Compare(x.diff, y.diff)
	})
}

// setSortPrefix and sortPrefix keep an update's sort prefix in its line
// (see sortCanonical): eight bytes of its data, from the offset where the
// data of the time's updates start to differ, big-endian (shorter data
// padded with zeros, which sort first, as JSON has no raw zero byte).
func (h *heldUpdate) setSortPrefix(p uint64) { h.line = int64(p) }
func (h *heldUpdate) sortPrefix() uint64     { return uint64(h.line) }

// commonPrefix returns the length of the prefix all updates' data share.
func commonPrefix(a *arena, updates []heldUpdate) int {
	first := a.data(&updates[0])
	n := len(first)
	for i := 1; i < len(updates) && n > 0; i++ {
		d := a.data(&updates[i])
		m := min(n, len(d))
		j := 0
		for j < m && d[j] == first[j] {
			j++
		}
		n = j
	}
	return n
}

// prefixAt returns the eight bytes of data from off, big-endian, padded
// with zeros.
func prefixAt(data []byte, off int) uint64 {
	if off+8 <= len(data) {
		return binary.BigEndian.Uint64(data[off:])
	}
	var b [8]byte
	if off < len(data) {
		copy(b[:], data[off:])
	}
	return binary.BigEndian.Uint64(b[:])
}

// tail returns data from off on (empty when shorter).
func tail(data []byte, off int) []byte {
	if off >= len(data) {
		return nil
	}
	return data[off:]
}
