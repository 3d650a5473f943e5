package ordering

import "math/bits"

// A Buffer holds records in the total order of their Items: by Key, then by
// arrival. It is the seed's RecordBuffer made generic and exact. The zero
// Buffer is empty and ready to use. A Buffer is not safe for concurrent use.
//
// A Buffer orders whatever it holds; it does not know whether more records
// with smaller keys are still to come. To merge shards whose records keep
// arriving, use a Merger.
type Buffer[T any] struct {
	items []Item[T] // a min-heap by Item.Before
	clock uint64    // the last clock given out; Clear keeps it
}

func itemBefore[T any](a, b Item[T]) bool { return a.Before(b) }

// tick returns a clock value greater than every one given out before.
func (b *Buffer[T]) tick() uint64 {
	b.clock++
	return b.clock
}

// Push adds rec under key, ordered after every held record with an equal key.
func (b *Buffer[T]) Push(key Key, rec T) {
	b.items = append(b.items, Item[T]{Key: key, Clock: b.tick(), Record: rec})
	heapUp(b.items, len(b.items)-1, itemBefore[T])
}

// PushAll adds every item, in slice order: each gets a fresh clock (the
// Clock field given is ignored), so items with equal keys come out in the
// order of the slice, after those already held. The heap order is restored
// once for the whole batch (one heapify), unless the batch is small against
// the buffer, when sifting each item in costs less.
func (b *Buffer[T]) PushAll(items []Item[T]) {
	old := len(b.items)
	for _, it := range items {
		it.Clock = b.tick()
		b.items = append(b.items, it)
	}
	n := len(b.items)
	if len(items)*bits.Len(uint(n)) >= n { // m·log n ≥ n: heapify is cheaper
		heapify(b.items, itemBefore[T])
		return
	}
	for i := old; i < n; i++ {
		heapUp(b.items, i, itemBefore[T])
	}
}

// Pop removes and returns the first item in the order; ok is false when the
// buffer is empty.
func (b *Buffer[T]) Pop() (it Item[T], ok bool) {
	if len(b.items) == 0 {
		return it, false
	}
	it = b.items[0]
	b.items = heapPop(b.items, itemBefore[T])
	return it, true
}

// Peek returns the item Pop would return, without removing it.
func (b *Buffer[T]) Peek() (it Item[T], ok bool) {
	if len(b.items) == 0 {
		return it, false
	}
	return b.items[0], true
}

// Clear drops every held record. The clock keeps counting, so items pushed
// afterwards still never share a clock with one handed out before.
func (b *Buffer[T]) Clear() {
	clear(b.items)
	b.items = b.items[:0]
}

// Len returns the number of records held.
func (b *Buffer[T]) Len() int { return len(b.items) }
