package ordering

import (
	"errors"
	"io"
)

// A Source yields one shard's records in the shard's order.
type Source[T any] interface {
	// Next returns the next record and its key, or io.EOF after the last
	// one. Any other error stops Merge, which returns it.
	Next() (Key, T, error)
}

// Merge reads every source to its end and calls emit for each record,
// exactly once, in the total order of the Merger: by key, ties by arrival,
// and each source's records in that source's order. The int passed to emit
// and to onDisorder is the source's index in sources.
//
// Memory is one record per source: Merge reads a source only when its
// previous record has been emitted, and emits a record before it calls that
// source's Next again, so a Source may reuse the memory of the record it
// returned last.
//
// onDisorder, when not nil, is called right after a source's Next returned
// a record whose key is smaller than that source's previous record's; the
// record keeps its place in its source's order (see the package
// documentation). Merge returns the first error of a Source or of emit,
// unchanged, having emitted nothing after it.
func Merge[T any](sources []Source[T], emit func(source int, it Item[T]) error,
	onDisorder func(source int, key Key)) error {
	var m Merger[int, T]
	for i := range sources {
		if err := m.Add(i); err != nil {
			return err
		}
	}
	for i := range sources {
		if err := refill(&m, i, sources[i], onDisorder); err != nil {
			return err
		}
	}
	for {
		it, i, ok := m.Next()
		if !ok {
			return nil // every source is at its end and drained
		}
		if err := emit(i, it); err != nil {
			return err
		}
		if m.starved(i) {
			if err := refill(&m, i, sources[i], onDisorder); err != nil {
				return err
			}
		}
	}
}

// refill reads one record of source i into the merger, or closes shard i
// at the source's end.
func refill[T any](m *Merger[int, T], i int, src Source[T], onDisorder func(int, Key)) error {
	key, rec, err := src.Next()
	if errors.Is(err, io.EOF) {
		return m.Close(i)
	}
	if err != nil {
		return err
	}
	inOrder, err := m.Push(i, key, rec)
	if err != nil {
		return err
	}
	if !inOrder && onDisorder != nil {
		onDisorder(i, key)
	}
	return nil
}
