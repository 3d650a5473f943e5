package ordering

// A binary min-heap over a slice, ordered by a less function. It is written
// here rather than taken from container/heap so that elements stay typed
// (no interface boxing, no allocation per push or pop).

// heapUp moves h[i] toward the root until its parent is not greater.
func heapUp[E any](h []E, i int, less func(a, b E) bool) {
	for i > 0 {
		parent := (i - 1) / 2
		if !less(h[i], h[parent]) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// heapDown moves h[i] toward the leaves until neither child is smaller.
func heapDown[E any](h []E, i int, less func(a, b E) bool) {
	n := len(h)
	for {
		smallest := i
		if l := 2*i + 1; l < n && less(h[l], h[smallest]) {
			smallest = l
		}
		if r := 2*i + 2; r < n && less(h[r], h[smallest]) {
			smallest = r
		}
		if smallest == i {
			return
		}
		h[i], h[smallest] = h[smallest], h[i]
		i = smallest
	}
}

// heapify establishes the heap order over all of h in O(len(h)).
func heapify[E any](h []E, less func(a, b E) bool) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		heapDown(h, i, less)
	}
}

// heapPop removes the root of h and returns the shortened heap; the vacated
// slot is zeroed so the heap does not pin what it held.
func heapPop[E any](h []E, less func(a, b E) bool) []E {
	last := len(h) - 1
	h[0] = h[last]
	var zero E
	h[last] = zero
	h = h[:last]
	heapDown(h, 0, less)
	return h
}
