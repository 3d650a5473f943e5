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
// updates; beyond, each update's pos takes its prefix and the updates
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
// themselves, each one's sort prefix in its pos: by the prefix's bytes
// (radixSort), then by the rest of the data and the diff where prefixes
// are equal.
func sortByPrefix(a *arena, updates []heldUpdate, lcp int) {
	for i := range updates {
		u := &updates[i]
		u.setSortPrefix(prefixAt(a.data(u), lcp))
	}
	radixSort(a, updates, lcp, 0)
}

// radixMin is the number of updates up to which radixSort sorts a bucket
// by insertion rather than splitting it by its next byte.
const radixMin = 32

// radixSort sorts updates, whose data share their first lcp bytes and
// whose sort prefixes share their first depth bytes, in place: an
// American flag sort (a most-significant-byte radix sort that permutes
// the updates in place, by cycles) on the prefix's remaining bytes, each
// bucket of equal bytes sorted in turn by the next one. It costs no
// memory beyond three tables of 256 counts a level, eight levels at
// most. A comparison sort of a time's 40-byte updates spent most of its
// time partitioning (5.6 s of a ten-million-update time's release): a
// radix pass moves each update once, and the data of a table's rows
// (digits, mostly) leave few updates to a bucket after a few bytes
// (BenchmarkSortBigTime, a million updates: 512-636 ns an update
// before, 170-175 now). A least-significant-byte radix sort would need
// a second array as large as what it sorts: for compact keys (prefix
// and position) of ten million updates 240 MB, a sixth of the whole
// release's peak, and then a pass gathering the updates in random order.
//
// Buckets of at most radixMin updates are sorted by insertion; once all
// eight bytes are equal, by the rest of the data, then the diff
// (compareTail).
func radixSort(a *arena, updates []heldUpdate, lcp, depth int) {
	for {
		if len(updates) <= radixMin {
			insertionSort(a, updates, lcp)
			return
		}
		if depth >= 8 {
			slices.SortFunc(updates, func(x, y heldUpdate) int { return compareTail(a, &x, &y, lcp) })
			return
		}
		shift := uint(56 - 8*depth)
		var count [256]int
		for i := range updates {
			count[byte(updates[i].sortPrefix()>>shift)]++
		}
		if count[byte(updates[0].sortPrefix()>>shift)] == len(updates) {
			depth++ // one bucket: nothing to move
			continue
		}
		// next[b] is where the next update of bucket b goes, end[b] where
		// the bucket ends.
		var next, end [256]int
		at := 0
		for b, c := range count {
			next[b] = at
			at += c
			end[b] = at
		}
		for b := range 256 {
			for next[b] < end[b] {
				// Carry the update at bucket b's next place to its own
				// bucket, and the one found there to its own, until one
				// of bucket b comes back.
				v := updates[next[b]]
				for d := int(byte(v.sortPrefix() >> shift)); d != b; d = int(byte(v.sortPrefix() >> shift)) {
					updates[next[d]], v = v, updates[next[d]]
					next[d]++
				}
				updates[next[b]] = v
				next[b]++
			}
		}
		start := 0
		for _, e := range end {
			if e-start > 1 {
				radixSort(a, updates[start:e], lcp, depth+1)
			}
			start = e
		}
		return
	}
}

// insertionSort sorts a few updates, whose data share their first lcp
// bytes, by their sort prefix, then compareTail.
func insertionSort(a *arena, updates []heldUpdate, lcp int) {
	for i := 1; i < len(updates); i++ {
		v := updates[i]
		j := i
		for ; j > 0 && comparePrefixed(a, &v, &updates[j-1], lcp) < 0; j-- {
			updates[j] = updates[j-1]
		}
		updates[j] = v
	}
}

// comparePrefixed orders updates, whose data share their first lcp bytes
// and whose lines hold their sort prefixes, canonically.
func comparePrefixed(a *arena, x, y *heldUpdate, lcp int) int {
	switch p, q := x.sortPrefix(), y.sortPrefix(); {
	case p < q:
		return -1
	case p > q:
		return 1
	}
	return compareTail(a, x, y, lcp)
}

// compareTail orders updates, whose data share their first lcp+8 bytes
// (or, shorter, all of them: see setSortPrefix), canonically: by the rest
// of their data, then diff.
func compareTail(a *arena, x, y *heldUpdate, lcp int) int {
	if c := bytes.Compare(tail(a.data(x), lcp+8), tail(a.data(y), lcp+8)); c != 0 {
		return c
	}
	return cmp.Compare(x.diff, y.diff)
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

// setSortPrefix and sortPrefix keep an update's sort prefix in its pos
// (see sortCanonical): eight bytes of its data, from the offset where the
// data of the time's updates start to differ, big-endian (shorter data
// padded with zeros, which sort first, as JSON has no raw zero byte).
func (h *heldUpdate) setSortPrefix(p uint64) { h.pos = p }
func (h *heldUpdate) sortPrefix() uint64     { return h.pos }

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
