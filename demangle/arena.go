package demangle

import (
	"unsafe"

	"github.com/cdclog/cdclog/cdc"
)

// arena holds the data and the positions of held updates, so that a held
// update (heldUpdate) refers to them by number and holds no pointer: the
// collector then skips a time's updates, however many (a time of a
// million updates spent a quarter of its time in the collector, marking
// them), and an update takes 40 bytes instead of 64.
//
// Data is copied into blocks of arenaBlock bytes (a larger datum gets a
// block of its own). A block is dropped once no held update refers to it
// and it is not the one being filled; its number is reused. What the
// receiver emitted refers to a block's bytes directly, which the
// collector keeps for as long as they are referenced, so dropping a block
// never changes emitted data. The zero value is an empty arena.
type arena struct {
	blocks [][]byte
	live   []int32 // held updates referring to each block
	free   []uint32
	cur    uint32
	inUse  bool   // cur is a block being filled
	buf    []byte // the block being filled, made at its full length
	fill   uint32 // the bytes of buf in use
	// sources are the position sources (file names) met, by number.
	sources   []string
	sourceIDs map[string]uint32
	lastSrc   string
	lastID    uint32
}

// arenaBlock is the size of the arena's blocks.
const arenaBlock = 32 << 10

// heldUpdate is one distinct update at a time: its diff, and its data and
// position, in the receiver's arena. Once its time's release has started,
// line holds its sort prefix instead (sortCanonical).
type heldUpdate struct {
	block, off, n uint32
	src           uint32
	diff          int64
	line, offset  int64
}

// hold copies data and at into the arena and returns the held update.
func (a *arena) hold(data []byte, diff int64, at cdc.Pos) heldUpdate {
	var h heldUpdate
	a.put(&h, data, diff, &at)
	return h
}

// put copies data and at into the arena and makes h the held update. It
// fills h in place, so that a time's slice is written once, not built on
// the stack and copied (the path of every accepted update). The data is
// copied into the block being filled, whose slice is left as it is: only
// the count of bytes in use moves.
func (a *arena) put(h *heldUpdate, data []byte, diff int64, at *cdc.Pos) {
	n := uint32(len(data))
	if uint64(a.fill)+uint64(n) > uint64(len(a.buf)) || !a.inUse {
		a.newBlock(max(arenaBlock, len(data)))
	}
	off := a.fill
	copy(a.buf[off:], data)
	a.fill += n
	a.live[a.cur]++
	src := a.lastID
	if !a.isLast(at.Source) {
		src = a.sourceID(at.Source)
	}
	// Field by field: a composite literal is built on the stack first.
	h.block, h.off, h.n, h.src = a.cur, off, n, src
	h.diff, h.line, h.offset = diff, at.Line, at.Offset
}

// newBlock starts a block of size bytes, dropping the one being filled if
// nothing refers to it.
func (a *arena) newBlock(size int) {
	if a.inUse && a.live[a.cur] == 0 {
		a.drop(a.cur)
	}
	var n uint32
	if k := len(a.free); k > 0 {
		n, a.free = a.free[k-1], a.free[:k-1]
	} else {
		n = uint32(len(a.blocks))
		a.blocks, a.live = append(a.blocks, nil), append(a.live, 0)
	}
	a.buf = make([]byte, size)
	a.blocks[n], a.cur, a.inUse, a.fill = a.buf, n, true, 0
}

func (a *arena) drop(n uint32) {
	a.blocks[n] = nil
	a.free = append(a.free, n)
}

// release says that h is no longer held.
func (a *arena) release(h *heldUpdate) {
	a.live[h.block]--
	if a.live[h.block] == 0 && (h.block != a.cur || !a.inUse) {
		a.drop(h.block)
	}
}

// data returns h's data, with its capacity cut to its length: valid, and
// unchanged, for as long as it is referenced.
func (a *arena) data(h *heldUpdate) []byte { return a.at(h.block, h.off, h.n) }

// at returns the n bytes at off in block, as data does.
func (a *arena) at(block, off, n uint32) []byte {
	return a.blocks[block][off : off+n : off+n]
}

// pos returns h's position.
func (a *arena) pos(h *heldUpdate) cdc.Pos {
	return cdc.Pos{Source: a.sources[h.src], Line: h.line, Offset: h.offset}
}

// message returns h as an update at time t.
func (a *arena) message(h *heldUpdate, t uint64) cdc.Message {
	return cdc.NewUpdate(a.data(h), t, h.diff)
}

// isLast reports whether s is the very string of the last position's
// source (lastID its number), as it nearly always is: recognised without
// comparing bytes or calling sourceID.
func (a *arena) isLast(s string) bool {
	return len(a.sources) > 0 && len(s) == len(a.lastSrc) && unsafe.StringData(s) == unsafe.StringData(a.lastSrc)
}

// sourceID returns the number of a position's source, the same as the
// last one's nearly always.
func (a *arena) sourceID(s string) uint32 {
	if len(a.sources) > 0 && s == a.lastSrc {
		return a.lastID
	}
	id, ok := a.sourceIDs[s]
	if !ok {
		if a.sourceIDs == nil {
			a.sourceIDs = map[string]uint32{}
		}
		id = uint32(len(a.sources))
		a.sources = append(a.sources, s)
		a.sourceIDs[s] = id
	}
	a.lastSrc, a.lastID = s, id
	return id
}
