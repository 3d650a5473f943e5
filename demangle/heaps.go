package demangle

// minHeap is a binary min-heap under less, without the interface boxing of
// container/heap (which allocates on every push of a value type).
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) Len() int { return len(h.items) }

// Top returns the smallest item; the heap must not be empty.
func (h *minHeap[T]) Top() T { return h.items[0] }

func (h *minHeap[T]) Push(x T) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *minHeap[T]) Pop() T {
	n := len(h.items) - 1
	top := h.items[0]
	h.items[0] = h.items[n]
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	h.down(0)
	return top
}

func (h *minHeap[T]) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			c = r
		}
		if !h.less(h.items[c], h.items[i]) {
			return
		}
		h.items[i], h.items[c] = h.items[c], h.items[i]
		i = c
	}
}

// init restores the heap order after items were set directly.
func (h *minHeap[T]) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// timeHeap is a min-heap of times that have an explicit count, so the
// receiver can skip a stretch of zero-count times in one step.
type timeHeap struct{ minHeap[uint64] }

func newTimeHeap() timeHeap {
	return timeHeap{minHeap[uint64]{less: func(a, b uint64) bool { return a < b }}}
}

func (h *timeHeap) push(t uint64) {
	if h.less == nil {
		*h = newTimeHeap()
	}
	h.Push(t)
}

// popBelow removes the times below f.
func (h *timeHeap) popBelow(f uint64) {
	for h.Len() > 0 && h.Top() < f {
		h.Pop()
	}
}

// stmtHeap is a min-heap, by last covered time, of the statements that give
// some time a zero count: the receiver names them when an update contradicts
// that zero.
type stmtHeap struct{ minHeap[*stmt] }

func newStmtHeap() stmtHeap {
	return stmtHeap{minHeap[*stmt]{less: func(a, b *stmt) bool { return a.p.Last() < b.p.Last() }}}
}

func (h *stmtHeap) push(s *stmt) {
	if h.less == nil {
		*h = newStmtHeap()
	}
	h.Push(s)
}

// popBelow removes the statements that end before f.
func (h *stmtHeap) popBelow(f uint64) {
	for h.Len() > 0 && h.Top().p.Last() < f {
		h.Pop()
	}
}

// zeroAt returns a held statement that gives t a zero count, or nil.
func (h *stmtHeap) zeroAt(t uint64) *stmt {
	for _, s := range h.items {
		if s.p.Covers(t) && s.p.CountAt(t) == 0 {
			return s
		}
	}
	return nil
}
