package demangle

import (
	"math"
	"slices"
	"sort"
)

// span is a run of covered times, both ends inclusive (so the last time,
// math.MaxUint64, needs no special case).
type span struct{ first, last uint64 }

// coverage is the union of the held statements' ranges, as sorted,
// disjoint, non-adjacent spans. It only grows, except that spans wholly
// below the frontier are trimmed. In practice it holds a handful of spans:
// one per gap in the progress information received.
type coverage struct {
	spans []span
}

// find returns the index of the span containing t, or of the first span
// after t.
func (c *coverage) find(t uint64) (int, bool) {
	i := c.search(t)
	if i < len(c.spans) && c.spans[i].first <= t {
		return i, true
	}
	return i, false
}

// search returns the index of the first span that ends at or after t. A
// few spans (the usual case: one per gap in the progress received) are
// scanned; more are searched.
func (c *coverage) search(t uint64) int {
	if len(c.spans) <= 8 {
		for i := range c.spans {
			if c.spans[i].last >= t {
				return i
			}
		}
		return len(c.spans)
	}
	return sort.Search(len(c.spans), func(i int) bool { return c.spans[i].last >= t })
}

// covers reports whether t is covered.
func (c *coverage) covers(t uint64) bool {
	_, ok := c.find(t)
	return ok
}

// contains reports whether every time in [first, last] is covered.
func (c *coverage) contains(first, last uint64) bool {
	i, ok := c.find(first)
	return ok && c.spans[i].last >= last
}

// add covers [first, last], merging with overlapping and adjacent spans.
func (c *coverage) add(first, last uint64) {
	// The common case, statements arriving about in time order: the range
	// starts at or just after the last span's end.
	if n := len(c.spans); n > 0 && first > c.spans[n-1].first && c.spans[n-1].last < math.MaxUint64 && first <= c.spans[n-1].last+1 {
		c.spans[n-1].last = max(c.spans[n-1].last, last)
		return
	}
	if n := len(c.spans); n > 0 && c.spans[n-1].last < math.MaxUint64 && first > c.spans[n-1].last+1 {
		c.spans = append(c.spans, span{first, last})
		return
	}
	// i: first span that ends at or after first-1 (touches or follows).
	lo := first
	if lo > 0 {
		lo--
	}
	i := c.search(lo)
	// j: first span that starts after last+1.
	hi := last
	if hi < math.MaxUint64 {
		hi++
	}
	j := i + sort.Search(len(c.spans)-i, func(k int) bool { return c.spans[i+k].first > hi })
	merged := span{first, last}
	if i < j {
		merged.first = min(merged.first, c.spans[i].first)
		merged.last = max(merged.last, c.spans[j-1].last)
	}
	c.spans = slices.Replace(c.spans, i, j, merged)
}

// addAt covers t, which is not covered, i being the index find(t)
// returned (of the first span after t): add's work for one time, without
// searching again.
func (c *coverage) addAt(i int, t uint64) {
	joinsPrev := i > 0 && c.spans[i-1].last+1 == t
	joinsNext := i < len(c.spans) && t < math.MaxUint64 && c.spans[i].first == t+1
	switch {
	case joinsPrev && joinsNext:
		c.spans[i-1].last = c.spans[i].last
		c.spans = slices.Delete(c.spans, i, i+1)
	case joinsPrev:
		c.spans[i-1].last = t
	case joinsNext:
		c.spans[i].first = t
	default:
		c.spans = slices.Insert(c.spans, i, span{t, t})
	}
}

// trim drops the spans that end before f.
func (c *coverage) trim(f uint64) {
	i := c.search(f)
	if i > 0 {
		c.spans = append(c.spans[:0], c.spans[i:]...)
	}
}

// cut drops the coverage of every time from t on.
func (c *coverage) cut(t uint64) {
	i := c.search(t)
	if i < len(c.spans) && c.spans[i].first < t {
		c.spans[i].last = t - 1
		i++
	}
	c.spans = c.spans[:i]
}
