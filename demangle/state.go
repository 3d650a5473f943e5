package demangle

import (
	"bytes"
	"cmp"
	"slices"
	"unsafe"

	"github.com/cdclog/cdclog/cdc"
)

// indexThreshold is the number of updates at one time beyond which a time
// keeps an index from data to update (updateIndex); below it a linear
// scan is faster.
const indexThreshold = 16

// maxReserve bounds the room a time's count makes its updates reserve at
// once: a count can be anything a producer says.
const maxReserve = 1 << 24

// timeState is what the receiver holds about one time at or above the
// frontier: the distinct updates seen, and the count once a statement gave
// one.
type timeState struct {
	count     uint64
	hasCount  bool
	countFrom *stmt
	updates   []heldUpdate
	index     *updateIndex
	// own holds a statement about this time alone (see holdSingle).
	own stmt
	// bytes is what the time costs in memory, as counted for the
	// receiver's budget (see horizon.go).
	bytes int64
}

// What held state costs, as the receiver counts it against its budget:
// about what it takes in memory, not to the byte (the data's own bytes
// come on top of an update's).
//
// updateCost stays what it was when an update took 40 bytes (it takes 32
// since its position is packed), so that the budget's spill points, and
// what Stats report, do not move.
const (
	updateCost = 40 + 16
	timeCost   = int64(unsafe.Sizeof(timeState{})) + 16
)

// stmt is a held progress statement and where it came from. It is kept for
// as long as it gives a count or coverage that some violation may need to
// name.
type stmt struct {
	p   cdc.Progress
	pos cdc.Pos
	// seq is the statement's acceptance number (see Held.Seq).
	seq uint64
	// rare holds what few statements need, nil for the others: a
	// statement is copied into every time it alone speaks for (see
	// holdSingle), and allocated for the others, so its size counts.
	rare *stmtRare
	// one holds the count of a single-count statement (the common shape),
	// so that the statement and its counts are one allocation.
	one [1]cdc.Count
}

// stmtRare is what a statement holds only when some of its claims were
// rejected or it reaches past the horizon.
type stmtRare struct {
	// rejected lists, sorted, the times whose claim was rejected as a
	// violation.
	rejected []uint64
	// spanning is set while the statement is on the receiver's list of
	// statements reaching past the horizon.
	spanning bool
}

// rejects reports whether the statement's claim about t was rejected.
func (s *stmt) rejects(t uint64) bool {
	if s.rare == nil {
		return false
	}
	_, found := slices.BinarySearch(s.rare.rejected, t)
	return found
}

// spanning reports whether the statement is on the receiver's list of
// statements reaching past the horizon.
func (s *stmt) spanning() bool { return s.rare != nil && s.rare.spanning }

// more returns the statement's rare part, made when it has none.
func (s *stmt) more() *stmtRare {
	if s.rare == nil {
		s.rare = &stmtRare{}
	}
	return s.rare
}

// ref returns the statement as a message and its position; nil gives the
// zero message, so a broken invariant degrades an error message rather than
// panicking.
func (s *stmt) ref() (cdc.Message, cdc.Pos) {
	if s == nil {
		return cdc.Message{}, cdc.Pos{}
	}
	return cdc.Message{Kind: cdc.KindProgress, Progress: s.p}, s.pos
}

// len returns the number of distinct updates held.
func (ts *timeState) len() int { return len(ts.updates) }

// first and last return the first and the last update held; there must
// be one.
func (ts *timeState) first() *heldUpdate { return &ts.updates[0] }
func (ts *timeState) last() *heldUpdate  { return &ts.updates[len(ts.updates)-1] }

// find returns the update with this data, or nil. When the time is
// indexed it also returns the data's hash, for the add that follows a
// miss.
func (ts *timeState) find(a *arena, data []byte) (*heldUpdate, probe) {
	if ts.index != nil {
		i, h := ts.index.find(a, ts.updates, data)
		if i >= 0 {
			return &ts.updates[i], probe{}
		}
		return nil, probe{hash: h, ok: true}
	}
	for i := range ts.updates {
		if h := &ts.updates[i]; h.n == uint32(len(data)) && bytes.Equal(a.data(h), data) {
			return h, probe{}
		}
	}
	return nil, probe{}
}

// probe is what a find that missed knows of the data: its hash, when ok.
type probe struct {
	hash uint32
	ok   bool
}

// add holds the update of data and diff at position at (in arena a),
// whose data is not held yet, and returns what it costs; pr is what the
// find that missed it returned (or the zero probe).
func (ts *timeState) add(a *arena, data []byte, diff int64, at *cdc.Pos, pr probe) int64 {
	if n := len(ts.updates); n == cap(ts.updates) && ts.hasCount && ts.count > uint64(n) && ts.count <= maxReserve {
		// The count says how many there will be: one allocation, instead
		// of doubling (and copying) a big time's updates step by step,
		// and the index sized once.
		ts.updates = growHuge(ts.updates, int(ts.count)-n)
		if ts.index != nil {
			ts.index.reserve(int(ts.count))
		}
	}
	p := len(ts.updates)
	if p == cap(ts.updates) {
		ts.updates = growHuge(ts.updates, 1)
	}
	ts.updates = ts.updates[:p+1] // put writes the update whole
	a.put(&ts.updates[p], data, diff, at)
	switch {
	case ts.index != nil && pr.ok:
		ts.index.addHashed(pr.hash, p)
	case ts.index != nil:
		ts.index.add(a, ts.updates, p)
	case len(ts.updates) > indexThreshold:
		ts.index = &updateIndex{}
		for i := range ts.updates {
			ts.index.add(a, ts.updates, i)
		}
	}
	cost := updateCost + int64(len(data))
	ts.bytes += cost
	return cost
}

// emit appends the time's updates to out in canonical order: by data bytes,
// then by diff.
func (ts *timeState) emit(a *arena, out []cdc.Message, t uint64) []cdc.Message {
	n := len(out)
	out = growHuge(out, len(ts.updates))[:n+len(ts.updates)] // a big time would grow it step by step
	if len(ts.updates) > 1 {
		ts.sortForRelease(a)
	}
	for i := range ts.updates {
		// Written in place, field by field: a message built first (as
		// append(out, a.message(...)) does) is copied, 104 bytes.
		h, m := &ts.updates[i], &out[n+i]
		*m = cdc.Message{}
		m.Kind, m.Update.Data, m.Update.Time, m.Update.Diff = cdc.KindUpdate, a.data(h), t, h.diff
	}
	return out
}

// sortForRelease puts a complete time's updates in canonical order as its
// release starts. A big time loses its index, which nothing looks up
// again (a push while the release is owed finishes it first): in a time
// of ten million updates its table (128 MB) can then be collected; and
// its updates their positions (see sortCanonical).
func (ts *timeState) sortForRelease(a *arena) {
	switch n := len(ts.updates); {
	case n > prefixSortMin:
		ts.index = nil
		sortCanonical(a, ts.updates)
	case n > smallSort:
		slices.SortFunc(ts.updates, func(x, y heldUpdate) int { return compareHeld(a, &x, &y) })
	case n > 1:
		sortFew(a, ts.updates)
	}
}

// smallSort is the number of updates up to which a time sorts them by
// insertion, in place: the few updates of an ordinary time, compared
// without a call through a function value or copies of the updates.
const smallSort = 12

// sortFew puts u, a few updates, in canonical order by insertion.
func sortFew(a *arena, u []heldUpdate) {
	for i := 1; i < len(u); i++ {
		for j := i; j > 0 && compareHeld(a, &u[j], &u[j-1]) < 0; j-- {
			u[j], u[j-1] = u[j-1], u[j]
		}
	}
}

// compareHeld orders updates canonically: by data bytes, then diff.
func compareHeld(a *arena, x, y *heldUpdate) int {
	if c := bytes.Compare(a.data(x), a.data(y)); c != 0 {
		return c
	}
	return cmp.Compare(x.diff, y.diff)
}
