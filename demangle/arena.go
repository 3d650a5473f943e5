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
	// base is, by block, the position of the first update put in it,
	// from which its updates' positions are counted (see packPos); far
	// holds, by block, the positions that do not fit that way.
	base []basePos
	far  [][]basePos
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
// pos holds its sort prefix instead (sortCanonical).
//
// The position is packed into pos (packPos), relative to the position of
// the first update put in its block: the updates of a block arrive
// together, so their lines and offsets are close. That made an update 32
// bytes instead of 40 (a time of ten million updates holds 400 MB of them
// otherwise, and while its slice grows, the old one on top).
type heldUpdate struct {
	block, off, n uint32
	src           uint32
	diff          int64
	pos           uint64
}

// basePos is a position's line and offset.
type basePos struct{ line, offset int64 }

// How pos packs a position: the line's distance from the block's base in
// bits 40 to 62, the offset's in bits 0 to 39; or, with bit 63 set, the
// index of the position in the block's far list, when a distance is
// negative or too large.
const (
	posFar      = 1 << 63
	offsetBits  = 40
	maxLineDist = 1<<23 - 1
	maxOffDist  = 1<<offsetBits - 1
)

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
		a.newBlock(max(arenaBlock, len(data)), at)
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
	h.diff, h.pos = diff, a.packPos(at)
}

// packPos returns the packed position (see heldUpdate) of at, for an
// update put in the current block.
func (a *arena) packPos(at *cdc.Pos) uint64 {
	b := &a.base[a.cur]
	dl, do := uint64(at.Line-b.line), uint64(at.Offset-b.offset)
	if at.Line >= b.line && at.Offset >= b.offset && dl <= maxLineDist && do <= maxOffDist {
		return dl<<offsetBits | do
	}
	far := &a.far[a.cur]
	*far = append(*far, basePos{at.Line, at.Offset})
	return posFar | uint64(len(*far)-1)
}

// newBlock starts a block of size bytes, whose updates' positions are
// counted from at, dropping the one being filled if nothing refers to it.
func (a *arena) newBlock(size int, at *cdc.Pos) {
	if a.inUse && a.live[a.cur] == 0 {
		a.drop(a.cur)
	}
	var n uint32
	if k := len(a.free); k > 0 {
		n, a.free = a.free[k-1], a.free[:k-1]
	} else {
		n = uint32(len(a.blocks))
		a.blocks, a.live = append(a.blocks, nil), append(a.live, 0)
		a.base, a.far = append(a.base, basePos{}), append(a.far, nil)
	}
	a.base[n] = basePos{at.Line, at.Offset}
	a.buf = make([]byte, size)
	a.blocks[n], a.cur, a.inUse, a.fill = a.buf, n, true, 0
}

func (a *arena) drop(n uint32) {
	a.blocks[n], a.far[n] = nil, nil
	a.free = append(a.free, n)
}

// release says that h is no longer held.
func (a *arena) release(h *heldUpdate) {
	a.live[h.block]--
	if a.live[h.block] == 0 {
		if h.block != a.cur || !a.inUse {
			a.drop(h.block)
		} else {
			a.far[h.block] = a.far[h.block][:0] // nothing refers to them
		}
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
	if h.pos&posFar != 0 {
		p := a.far[h.block][h.pos&^posFar]
		return cdc.Pos{Source: a.sources[h.src], Line: p.line, Offset: p.offset}
	}
	b := a.base[h.block]
	return cdc.Pos{Source: a.sources[h.src], Line: b.line + int64(h.pos>>offsetBits), Offset: b.offset + int64(h.pos&maxOffDist)}
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
