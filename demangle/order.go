package demangle

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
)

// sortByKeys is the number of updates beyond which a time is sorted
// through keys (canonicalOrder) rather than by moving its updates.
const sortByKeys = 64

// sortKey stands for an update in canonicalOrder: eight bytes of its
// data, from the offset where the data of the time's updates start to
// differ, big-endian (shorter data padded with zeros, which sort first,
// as JSON has no raw zero byte), so that most comparisons are one of
// integers; then what the update is (its diff and where its data lie in
// the arena), so that what is sorted is emitted without reading the
// time's updates again.
type sortKey struct {
	prefix        uint64
	diff          int64
	block, off, n uint32
}

// held returns the update k stands for, with its data and diff (its
// position is not kept).
func (k *sortKey) held() heldUpdate {
	return heldUpdate{block: k.block, off: k.off, n: k.n, diff: k.diff}
}

// canonicalOrder returns the updates in canonical order (by data bytes,
// then diff), as keys, without moving them. Sorting a million updates by
// moving their 40-byte structs and comparing their data was most of the
// time a one-time stream of a million updates took to release
// (BenchmarkReceiverOneBigTime); keys that compare as integers, past the
// prefix all the data share (`{"id":` and the like), cost a fraction of
// it. The keys carry each update's data reference and diff because, in
// canonical order, the updates are read at random: in a time of ten
// million (400 MB of updates) reading each one again to emit it was a
// cache miss a record, about an eighth of demangle's CPU on that time.
func canonicalOrder(a *arena, updates []heldUpdate) []sortKey {
	lcp := commonPrefix(a, updates)
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
	return keys
}

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
