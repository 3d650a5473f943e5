package demangle

import "math"

// windowSize is the number of times from the frontier on whose state is
// kept in an array rather than a map: in a reordered stream nearly every
// message falls there, and an array index costs a fraction of a map lookup.
const windowSize = 4096

// timeIndex finds the state of a time at or above the frontier. Times in
// [base, base+windowSize) live in a ring of slots (slot t mod windowSize
// can only belong to one time of the window); later times live in a map,
// and move into the ring when the frontier comes near them. The zero value
// is an empty index with base 0.
type timeIndex struct {
	base uint64
	win  [windowSize]*timeState
	over map[uint64]*timeState
	// peakOver is the map's largest size since it was last rebuilt: Go maps
	// never shrink, so a map down to a quarter of it is rebuilt.
	peakOver int
	n        int
}

func (ix *timeIndex) inWindow(t uint64) bool { return t >= ix.base && t-ix.base < windowSize }

func (ix *timeIndex) get(t uint64) *timeState {
	if ix.inWindow(t) {
		return ix.win[t%windowSize]
	}
	return ix.over[t]
}

// put stores ts as the state of t, which has none.
func (ix *timeIndex) put(t uint64, ts *timeState) {
	ix.n++
	if ix.inWindow(t) {
		ix.win[t%windowSize] = ts
		return
	}
	if ix.over == nil {
		ix.over = make(map[uint64]*timeState)
	}
	ix.over[t] = ts
	ix.peakOver = max(ix.peakOver, len(ix.over))
}

func (ix *timeIndex) del(t uint64) {
	if ix.inWindow(t) {
		if ix.win[t%windowSize] != nil {
			ix.n--
			ix.win[t%windowSize] = nil
		}
		return
	}
	if _, ok := ix.over[t]; ok {
		ix.n--
		delete(ix.over, t)
		if ix.peakOver > 4096 && len(ix.over) < ix.peakOver/4 {
			ix.rebuild()
		}
	}
}

func (ix *timeIndex) rebuild() {
	m := make(map[uint64]*timeState, len(ix.over))
	for k, v := range ix.over {
		m[k] = v
	}
	ix.over, ix.peakOver = m, len(m)
}

// scanCost is what each costs, in lookups: a range of times shorter than
// that is cheaper to look up one by one.
func (ix *timeIndex) scanCost() uint64 { return windowSize + uint64(len(ix.over)) }

// len returns the number of times with a state.
func (ix *timeIndex) len() int { return ix.n }

// slide moves the window's start to base (never backwards). The caller has
// deleted every state below it; states that the window now reaches move
// out of the map.
func (ix *timeIndex) slide(base uint64) {
	if base <= ix.base {
		return
	}
	// The window's last time, inclusive: near the end of the time range
	// the window is cut short there, and that last time is still in it.
	oldLast := satAdd(ix.base, windowSize-1)
	ix.base = base
	newLast := satAdd(base, windowSize-1)
	if len(ix.over) == 0 || newLast == oldLast {
		return
	}
	move := func(t uint64, ts *timeState) {
		delete(ix.over, t)
		ix.win[t%windowSize] = ts
	}
	if newLast-oldLast <= uint64(len(ix.over)) {
		for t := oldLast + 1; ; t++ {
			if ts, ok := ix.over[t]; ok {
				move(t, ts)
			}
			if t == newLast {
				return
			}
		}
	}
	for t, ts := range ix.over {
		if ix.inWindow(t) {
			move(t, ts)
		}
	}
}

// each calls fn for every time with a state, in no particular order.
func (ix *timeIndex) each(fn func(t uint64, ts *timeState)) {
	for i, ts := range ix.win {
		if ts != nil {
			// Slot i holds the one window time congruent to i.
			t := ix.base + (uint64(i)-ix.base%windowSize+windowSize)%windowSize
			fn(t, ts)
		}
	}
	for t, ts := range ix.over {
		fn(t, ts)
	}
}

func satAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
