package ordering

import (
	"fmt"
	"slices"
)

// A Merger merges the records of many shards into one total order (key,
// then arrival clock) while the shards are still being read.
//
// Each shard is a FIFO: its records leave in the order they were pushed,
// and only the first record of each shard competes with the other shards'.
// Next releases a record only when it is safe: every shard that is still
// open holds at least one record, so no record pushed later can belong
// before it (provided each shard is itself in key order). Records of a closed
// shard stay until they are released; nothing is dropped on Close.
//
// A shard whose records are not in key order keeps its own order anyway:
// Push reports each record that breaks it, and the output, which still holds
// every record once and every shard's order, is non-decreasing in key only
// where the shards are (see the package documentation).
//
// S identifies shards (a file index, a shard id string); T is the record.
// The zero Merger has no shards and is ready to use. A Merger is not safe
// for concurrent use. It holds every record pushed and not yet released: to
// bound memory, push into a shard only when Starved lists it.
type Merger[S comparable, T any] struct {
	shards   map[S]*shard[S, T]
	order    []*shard[S, T] // in order of Add, for a deterministic Starved
	heads    []*shard[S, T] // min-heap of the non-empty shards, by first record
	starving int            // open shards holding no record
	held     int            // records held in all shards
	clock    uint64         // the last clock given out
}

// shard is one shard's FIFO queue and state.
type shard[S comparable, T any] struct {
	id     S
	queue  []Item[T] // pending records; queue[first:] are live
	first  int
	closed bool
	last   Key // key of the last record pushed, for the order check
	pushed bool
}

func (s *shard[S, T]) empty() bool    { return s.first == len(s.queue) }
func (s *shard[S, T]) head() *Item[T] { return &s.queue[s.first] }

// headBefore orders shards by their first record.
func headBefore[S comparable, T any](a, b *shard[S, T]) bool {
	return a.head().Before(*b.head())
}

// NewMerger returns an empty Merger; the zero value works as well.
func NewMerger[S comparable, T any]() *Merger[S, T] { return &Merger[S, T]{} }

// Add opens a new, empty shard. Until it gets a record or is closed, Next
// releases nothing. Adding an id the merger still holds is ErrShardExists;
// an id that was closed and fully released may be added again.
func (m *Merger[S, T]) Add(id S) error {
	if _, ok := m.shards[id]; ok {
		return fmt.Errorf("ordering: add shard %v: %w", id, ErrShardExists)
	}
	if m.shards == nil {
		m.shards = make(map[S]*shard[S, T])
	}
	s := &shard[S, T]{id: id}
	m.shards[id] = s
	m.order = append(m.order, s)
	m.starving++
	return nil
}

// Push appends rec, under key, to the end of shard id's queue. inOrder is
// false when key is smaller than the key of the shard's previous record:
// the record is still accepted, and leaves after that previous one. Pushing
// to an unknown shard is ErrUnknownShard, to a closed one ErrShardClosed.
func (m *Merger[S, T]) Push(id S, key Key, rec T) (inOrder bool, err error) {
	s, ok := m.shards[id]
	switch {
	case !ok:
		return false, fmt.Errorf("ordering: push to shard %v: %w", id, ErrUnknownShard)
	case s.closed:
		return false, fmt.Errorf("ordering: push to shard %v: %w", id, ErrShardClosed)
	}
	inOrder = !s.pushed || key.Compare(s.last) >= 0
	s.last, s.pushed = key, true
	m.clock++
	wasEmpty := s.empty()
	s.queue = append(s.queue, Item[T]{Key: key, Clock: m.clock, Record: rec})
	m.held++
	if wasEmpty {
		m.starving--
		m.heads = append(m.heads, s)
		heapUp(m.heads, len(m.heads)-1, headBefore[S, T])
	}
	return inOrder, nil
}

// Close marks shard id as finished: it will get no more records, and Next
// no longer waits for it. Its held records are kept and released in order.
// Closing a closed shard that still holds records does nothing. A closed
// shard is forgotten once it holds no record (at Close when it is empty,
// else when Next releases its last one), so that its id may be added
// again: closing it, or pushing to it, is then ErrUnknownShard, as for an
// id never added.
func (m *Merger[S, T]) Close(id S) error {
	s, ok := m.shards[id]
	if !ok {
		return fmt.Errorf("ordering: close shard %v: %w", id, ErrUnknownShard)
	}
	if s.closed {
		return nil
	}
	s.closed = true
	if s.empty() {
		m.starving--
		m.forget(s)
	}
	return nil
}

// Next removes and returns the first record in the total order, with the
// shard it came from, when releasing it is safe: every open shard holds a
// record. ok is false when some open shard is empty (push to it or close
// it, see Starved) or when the merger holds nothing.
func (m *Merger[S, T]) Next() (it Item[T], id S, ok bool) {
	if m.starving > 0 || len(m.heads) == 0 {
		return it, id, false
	}
	s := m.heads[0]
	it = *s.head()
	*s.head() = Item[T]{} // do not pin the record
	s.first++
	m.held--
	if !s.empty() {
		s.compact()
		heapDown(m.heads, 0, headBefore[S, T])
		return it, s.id, true
	}
	s.queue, s.first = s.queue[:0], 0
	m.heads = heapPop(m.heads, headBefore[S, T])
	if s.closed {
		m.forget(s)
	} else {
		m.starving++
	}
	return it, s.id, true
}

// compact moves the live records to the front once the released prefix is
// at least as long as they are, so a shard's queue does not creep forward.
func (s *shard[S, T]) compact() {
	live := len(s.queue) - s.first
	if s.first < 32 || s.first < live {
		return
	}
	n := copy(s.queue, s.queue[s.first:])
	clear(s.queue[n:])
	s.queue, s.first = s.queue[:n], 0
}

// forget drops a closed, drained shard.
func (m *Merger[S, T]) forget(s *shard[S, T]) {
	delete(m.shards, s.id)
	if i := slices.Index(m.order, s); i >= 0 {
		m.order = slices.Delete(m.order, i, i+1)
	}
}

// Starved appends to dst the open shards that hold no record, in the order
// they were added, and returns the extended slice. Next releases nothing
// while it is non-empty.
func (m *Merger[S, T]) Starved(dst []S) []S {
	if m.starving == 0 {
		return dst
	}
	for _, s := range m.order {
		if !s.closed && s.empty() {
			dst = append(dst, s.id)
		}
	}
	return dst
}

// starved reports whether shard id is open and holds no record.
func (m *Merger[S, T]) starved(id S) bool {
	s, ok := m.shards[id]
	return ok && !s.closed && s.empty()
}

// Len returns the number of records held, in all shards.
func (m *Merger[S, T]) Len() int { return m.held }

// Shards returns the number of shards held: open ones, and closed ones with
// records not yet released.
func (m *Merger[S, T]) Shards() int { return len(m.shards) }
