package demangle

import (
	"bytes"
	"slices"

	"github.com/cdclog/cdclog/cdc"
)

// indexThreshold is the number of updates at one time beyond which a time
// keeps a map from data to update; below it a linear scan is faster.
const indexThreshold = 16

// timeState is what the receiver holds about one time at or above the
// frontier: the distinct updates seen, and the count once a statement gave
// one.
type timeState struct {
	count     uint64
	hasCount  bool
	countFrom *stmt
	updates   []heldUpdate
	index     map[string]int
	// own holds a statement about this time alone (see holdSingle).
	own stmt
}

// heldUpdate is one distinct update at a time; its data is the receiver's
// own copy.
type heldUpdate struct {
	data []byte
	diff int64
	pos  cdc.Pos
}

// stmt is a held progress statement and where it came from. It is kept for
// as long as it gives a count or coverage that some violation may need to
// name.
type stmt struct {
	p   cdc.Progress
	pos cdc.Pos
	// one holds the count of a single-count statement (the common shape),
	// so that the statement and its counts are one allocation.
	one [1]cdc.Count
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

func (h *heldUpdate) message(t uint64) cdc.Message {
	return cdc.NewUpdate(h.data, t, h.diff)
}

// find returns the index of the update with this data, or -1.
func (ts *timeState) find(data []byte) int {
	if ts.index != nil {
		if i, ok := ts.index[string(data)]; ok {
			return i
		}
		return -1
	}
	for i := range ts.updates {
		if bytes.Equal(ts.updates[i].data, data) {
			return i
		}
	}
	return -1
}

func (ts *timeState) add(h heldUpdate) {
	ts.updates = append(ts.updates, h)
	switch {
	case ts.index != nil:
		ts.index[string(h.data)] = len(ts.updates) - 1
	case len(ts.updates) > indexThreshold:
		ts.index = make(map[string]int, len(ts.updates)*2)
		for i := range ts.updates {
			ts.index[string(ts.updates[i].data)] = i
		}
	}
}

// emit appends the time's updates to out in canonical order: by data bytes,
// then by diff.
func (ts *timeState) emit(out []cdc.Message, t uint64) []cdc.Message {
	if len(ts.updates) > 1 {
		slices.SortFunc(ts.updates, func(a, b heldUpdate) int {
			if c := bytes.Compare(a.data, b.data); c != 0 {
				return c
			}
			switch {
			case a.diff < b.diff:
				return -1
			case a.diff > b.diff:
				return 1
			}
			return 0
		})
	}
	for i := range ts.updates {
		out = append(out, ts.updates[i].message(t))
	}
	return out
}
