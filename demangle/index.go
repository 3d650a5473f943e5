package demangle

import (
	"bytes"
	"hash/maphash"
)

// updateIndex finds a time's update by its data once the time holds more
// than indexThreshold of them: an open-addressing table of slots, each
// the update's position in timeState.updates (plus one; 0 is empty) and
// 32 bits of its data's hash, probed linearly from those 32 bits, at most
// three quarters full (see overLoad). It replaced a map[string]int, whose
// string keys cost an allocation and a copy of the data per update and
// whose growth and probing took a third of a one-time stream of a million updates
// (BenchmarkReceiverOneBigTime).
//
// In a big time every probe is a cache miss (a time of ten million
// updates has a table of 128 MB), so the index touches each slot as few
// times as it can: find returns the hash for the add that follows a miss
// (whose probe then finds the slots in cache), growing moves the slots by
// the hash bits they keep, without reading the updates' data again, and a
// time whose count is known sizes its table once (reserve).
type updateIndex struct {
	slots []uint64
	n     int
}

// hashSeed is the index's hash seed, made once per process: the hash only
// spreads keys over slots (a collision costs a comparison, never a wrong
// answer), so which seed does not change what the receiver does.
var hashSeed = maphash.MakeSeed()

func dataHash(data []byte) uint32 { return uint32(maphash.Bytes(hashSeed, data)) }

// find returns the position of the update whose data is data, or -1, and
// the data's hash, for addHashed.
func (x *updateIndex) find(a *arena, updates []heldUpdate, data []byte) (int, uint32) {
	h := dataHash(data)
	mask := uint64(len(x.slots) - 1)
	for i := uint64(h) & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return -1, h
		}
		if uint32(s>>32) == h {
			if p := int(uint32(s)) - 1; updates[p].n == uint32(len(data)) && bytes.Equal(a.data(&updates[p]), data) {
				return p, h
			}
		}
	}
}

// add indexes updates[p], whose data the index does not hold.
func (x *updateIndex) add(a *arena, updates []heldUpdate, p int) {
	x.addHashed(dataHash(a.data(&updates[p])), p)
}

// addHashed indexes the update at position p, whose data has hash h and
// is not held.
func (x *updateIndex) addHashed(h uint32, p int) {
	if overLoad(x.n+1, len(x.slots)) {
		x.grow(max(64, 2*len(x.slots)))
	}
	x.put(uint64(h)<<32 | uint64(p+1))
	x.n++
}

// reserve makes room for n updates in all, so that the table does not
// grow (and move its slots) again until it holds them.
func (x *updateIndex) reserve(n int) {
	size := max(64, len(x.slots))
	for overLoad(n, size) {
		size *= 2
	}
	if size > len(x.slots) {
		x.grow(size)
	}
}

// overLoad reports whether n slots in a table of size pass its load
// bound, three quarters. At half (the bound until round 3) a time of ten
// million updates took a table of 2^25 slots, 256 MB; at three quarters
// 2^24, 128 MB, at 0.6 full. A probe reads slots in order, eight to a
// cache line, so the longer runs of a fuller table cost little beside the
// line's miss.
func overLoad(n, size int) bool { return 4*n > 3*size }

// put stores slot s in the first empty slot from its hash on.
func (x *updateIndex) put(s uint64) {
	mask := uint64(len(x.slots) - 1)
	i := (s >> 32) & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = s
}

// grow makes the table size slots (a power of two, larger than it is)
// and puts the slots back by their hash bits.
func (x *updateIndex) grow(size int) {
	old := x.slots
	x.slots = makeHuge[uint64](size, size)
	for _, s := range old {
		if s != 0 {
			x.put(s)
		}
	}
}
