package demangle

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
)

// prefixSortMin is the number of updates beyond which a time is sorted
// with sort prefixes (sortCanonical) rather than by comparing data.
const prefixSortMin = 64

// keySortMax is the number of updates up to which sortCanonical sorts
// keys beside the updates (at most 2 MB of them, in cache) rather than the
// updates themselves: moving 40-byte updates made a time of a thousand
// updates sort about a sixth slower (BenchmarkReceiverManyUpdatesPerTime).
const keySortMax = 1 << 16

// sortCanonical sorts a complete time's updates in canonical order (by
// data bytes, then diff), in place, and gives up their positions, which
// nothing may ask for again. That holds for the frontier's time once its
// release starts: it is complete, so no message about it can be a
// violation naming one of its updates; a push while its release is owed
// finishes the release first; it is never shed; and MarshalBinary
// refuses while a release is owed.
//
// Sorting a million updates by comparing their data was most of the time
// a one-time stream of a million updates took to release
// (BenchmarkReceiverOneBigTime); integer prefixes of the data, past the
// prefix all the data share (`{"id":` and the like), cost a fraction of
// it. Up to keySortMax updates the prefixes go in keys that also carry
// what an update is (sortKey), which are sorted and written back over the
// updates; beyond, each update's line takes its prefix and the updates
// themselves are sorted, which costs no memory: in a time of ten million
// updates the keys were 320 MB on top of the updates' 400 MB. Either way
// emitting then reads the updates in order.
func sortCanonical(a *arena, updates []heldUpdate) {
	lcp := commonPrefix(a, updates)
	if len(updates) <= keySortMax {
		sortThroughKeys(a, updates, lcp)
	} else {
		sortByPrefix(a, updates, lcp)
	}
}

// sortByPrefix sorts updates, whose data share their first lcp bytes,
// themselves, each one's sort prefix in its line.
func sortByPrefix(a *arena, updates []heldUpdate, lcp int) {
	for i := range updates {
		u := &updates[i]
		u.setSortPrefix(prefixAt(a.data(u), lcp))
	}
	slices.SortFunc(updates, func(x, y heldUpdate) int {
		switch p, q := x.sortPrefix(), y.sortPrefix(); {
		case p < q:
			return -1
		case p > q:
			return 1
		}
		if c := bytes.Compare(tail(a.data(&x), lcp+8), tail(a.data(&y), lcp+8)); c != 0 {
			return c
		}
		return cmp.Compare(x.diff, y.diff)
	})
}

// sortKey stands for an update in sortThroughKeys: its sort prefix (see
// setSortPrefix), then its diff and where its data lie in the arena.
type sortKey struct {
	prefix        uint64
	diff          int64
	block, off, n uint32
}

// sortThroughKeys sorts updates, whose data share their first lcp bytes,
// through keys, and writes them back in order without their positions.
func sortThroughKeys(a *arena, updates []heldUpdate, lcp int) {
	keys := make([]sortKey, len(updates))
	for i := range updates {
		u := &updates[i]
		keys[i] = sortKey{prefix: prefixAt(a.data(u), lcp), diff: u.diff, block: u.block, off: u.off, n: u.n}
	}
	slices.SortFunc(keys, func(k, l sortKey) int {
		switch {
		case k.prefix < l.prefix:
			return -1
		case k.prefix > l.prefix:
			return 1
		}
		if c := bytes.Compare(tail(a.at(k.block, k.off, k.n), lcp+8), tail(a.at(l.block, l.off, l.n), lcp+8)); c != 0 {
			return c
		}
		return cmp.Compare(k.diff, l.diff)
	})
	for i, k := range keys {
		updates[i] = heldUpdate{block: k.block, off: k.off, n: k.n, diff: k.diff}
	}
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
