package demangle

import "container/heap"

// timeHeap is a min-heap of times that have an explicit count, so the
// receiver can skip a stretch of zero-count times in one step.
type timeHeap []uint64

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(uint64)) }
func (h *timeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (h *timeHeap) push(t uint64) { heap.Push(h, t) }

// popBelow removes the times below f.
func (h *timeHeap) popBelow(f uint64) {
	for len(*h) > 0 && (*h)[0] < f {
		heap.Pop(h)
	}
}

// stmtHeap is a min-heap, by last covered time, of the statements that give
// some time a zero count: the receiver names them when an update contradicts
// that zero.
type stmtHeap []*stmt

func (h stmtHeap) Len() int           { return len(h) }
func (h stmtHeap) Less(i, j int) bool { return h[i].p.Last() < h[j].p.Last() }
func (h stmtHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *stmtHeap) Push(x any)        { *h = append(*h, x.(*stmt)) }
func (h *stmtHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

func (h *stmtHeap) push(s *stmt) { heap.Push(h, s) }

// popBelow removes the statements that end before f.
func (h *stmtHeap) popBelow(f uint64) {
	for len(*h) > 0 && (*h)[0].p.Last() < f {
		heap.Pop(h)
	}
}

// zeroAt returns a held statement that gives t a zero count, or nil.
func (h stmtHeap) zeroAt(t uint64) *stmt {
	for _, s := range h {
		if s.p.Covers(t) && s.p.CountAt(t) == 0 {
			return s
		}
	}
	return nil
}
