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

// sortKey stands for update i in canonicalOrder: eight bytes of its data,
// from the offset where the data of the time's updates start to differ,
// big-endian (shorter data padded with zeros, which sort first, as JSON
// has no raw zero byte), so that most comparisons are one of integers.
type sortKey struct {
	prefix uint64
	i      int32
}

// canonicalOrder returns the positions of updates in canonical order (by
// data bytes, then diff) without moving them. Sorting a million updates
// by moving their 64-byte structs and comparing their data was most of
// the time a one-time stream of a million updates took to release
// (BenchmarkReceiverOneBigTime); keys of 16 bytes that compare as
// integers, past the prefix all the data share (`{"id":` and the like),
// cost a fraction of it.
func canonicalOrder(a *arena, updates []heldUpdate) []int32 {
	lcp := commonPrefix(a, updates)
	keys := make([]sortKey, len(updates))
	for i := range updates {
		keys[i] = sortKey{prefix: prefixAt(a.data(&updates[i]), lcp), i: int32(i)}
	}
	slices.SortFunc(keys, func(k, l sortKey) int {
		switch {
		case k.prefix < l.prefix:
			return -1
		case k.prefix > l.prefix:
			return 1
		}
		x, y := &updates[k.i], &updates[l.i]
		if c := bytes.Compare(tail(a.data(x), lcp+8), tail(a.data(y), lcp+8)); c != 0 {
			return c
		}
		return cmp.Compare(x.diff, y.diff)
	})
	order := make([]int32, len(keys))
	for k := range keys {
		order[k] = keys[k].i
	}
	return order
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
