package demangle

// keyHeap is a binary min-heap of values ordered by a uint64 key. The key
// is stored beside the value, so that comparing two items is comparing two
// integers: no call through a function value, no interface boxing (as
// container/heap would need). The zero value is an empty heap.
type keyHeap[T any] struct {
	items []keyed[T]
}

type keyed[T any] struct {
	key uint64
	val T
}

// Len returns the number of items.
func (h *keyHeap[T]) Len() int { return len(h.items) }

// TopKey returns the smallest key; the heap must not be empty.
func (h *keyHeap[T]) TopKey() uint64 { return h.items[0].key }

// Push adds v under key.
func (h *keyHeap[T]) Push(key uint64, v T) {
	h.items = append(h.items, keyed[T]{key, v})
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.items[i].key >= h.items[p].key {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

// Pop removes the item with the smallest key; the heap must not be empty.
func (h *keyHeap[T]) Pop() {
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items[n] = keyed[T]{}
	h.items = h.items[:n]
	h.down(0)
}

func (h *keyHeap[T]) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h.items[r].key < h.items[l].key {
			c = r
		}
		if h.items[c].key >= h.items[i].key {
			return
		}
		h.items[i], h.items[c] = h.items[c], h.items[i]
		i = c
	}
}

// keepIf removes the items for which keep is false, in one heapify.
func (h *keyHeap[T]) keepIf(keep func(key uint64, v T) bool) {
	items := h.items[:0]
	for _, it := range h.items {
		if keep(it.key, it.val) {
			items = append(items, it)
		}
	}
	clear(h.items[len(items):])
	h.items = items
	for i := len(items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// popBelow removes the items whose key is below f.
func (h *keyHeap[T]) popBelow(f uint64) {
	for len(h.items) > 0 && h.items[0].key < f {
		h.Pop()
	}
}

// timeHeap is a min-heap of times that have an explicit count, so the
// receiver can skip a stretch of zero-count times in one step.
type timeHeap struct{ keyHeap[struct{}] }

func (h *timeHeap) push(t uint64) { h.Push(t, struct{}{}) }

// Top returns the smallest time; the heap must not be empty.
func (h *timeHeap) Top() uint64 { return h.TopKey() }

// keepBelow removes the times at or above t.
func (h *timeHeap) keepBelow(t uint64) {
	h.keyHeap.keepIf(func(k uint64, _ struct{}) bool { return k < t })
}

// stmtHeap is a min-heap, by last covered time, of the statements that give
// some time a zero count: the receiver names them when an update contradicts
// that zero.
type stmtHeap struct{ keyHeap[*stmt] }

func (h *stmtHeap) push(s *stmt) { h.Push(s.p.Last(), s) }

// statements returns the held statements, in no particular order.
func (h *stmtHeap) statements() []*stmt {
	out := make([]*stmt, len(h.items))
	for i := range h.items {
		out[i] = h.items[i].val
	}
	return out
}

// keepIf removes the statements for which keep is false.
func (h *stmtHeap) keepIf(keep func(*stmt) bool) {
	h.keyHeap.keepIf(func(_ uint64, s *stmt) bool { return keep(s) })
}

// zeroAt returns a held statement that gives t a zero count, or nil.
func (h *stmtHeap) zeroAt(t uint64) *stmt {
	for _, it := range h.items {
		if s := it.val; s.p.Covers(t) && s.p.CountAt(t) == 0 && !s.rejects(t) {
			return s
		}
	}
	return nil
}
