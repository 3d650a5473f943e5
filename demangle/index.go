package demangle

import (
	"bytes"
	"hash/maphash"
)

// updateIndex finds a time's update by its data once the time holds more
// than indexThreshold of them: an open-addressing table of slots, each
// the update's position in timeState.updates (plus one; 0 is empty) and
// 32 bits of its data's hash, probed linearly, at most half full. It
// replaced a map[string]int, whose string keys cost an allocation and a
// copy of the data per update and whose growth and probing took a third
// of a one-time stream of a million updates (BenchmarkReceiverOneBigTime).
type updateIndex struct {
	slots []uint64
	n     int
}

// hashSeed is the index's hash seed, made once per process: the hash only
// spreads keys over slots (a collision costs a comparison, never a wrong
// answer), so which seed does not change what the receiver does.
var hashSeed = maphash.MakeSeed()

func dataHash(data []byte) uint64 { return maphash.Bytes(hashSeed, data) }

// find returns the position of the update whose data is data, or -1.
func (x *updateIndex) find(a *arena, updates []heldUpdate, data []byte) int {
	h := dataHash(data)
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return -1
		}
		if uint32(s>>32) == uint32(h) {
			if p := int(uint32(s)) - 1; updates[p].n == uint32(len(data)) && bytes.Equal(a.data(&updates[p]), data) {
				return p
			}
		}
	}
}

// add indexes updates[p], whose data the index does not hold.
func (x *updateIndex) add(a *arena, updates []heldUpdate, p int) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(a, updates)
	}
	x.put(dataHash(a.data(&updates[p])), p)
	x.n++
}

func (x *updateIndex) put(h uint64, p int) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = uint64(uint32(h))<<32 | uint64(p+1)
}

// grow doubles the table (or makes the first one) and puts back the
// updates it indexes: the first x.n of updates.
func (x *updateIndex) grow(a *arena, updates []heldUpdate) {
	size := max(64, 2*len(x.slots))
	x.slots = make([]uint64, size)
	for p := range x.n {
		x.put(dataHash(a.data(&updates[p])), p)
	}
}
