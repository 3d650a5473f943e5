package demangle

import (
	"math"
	"slices"

	"github.com/cdclog/cdclog/cdc"
)

// advance moves the frontier as far as the held state allows, appending the
// completed times' updates and one progress statement for the whole step to
// out (several consecutive ones where one would be too long, see
// stepSplit), then forgets everything below the new frontier. With a
// horizon, each time it reaches is loaded first, and once it has moved
// the memory it freed is filled again from the store. With an output
// limit (SetOutputLimit) it may stop part-way: see release.go.
func (r *Receiver) advance(out []cdc.Message) ([]cdc.Message, error) {
	if r.done {
		return out, nil
	}
	r.begin(r.frontier)
	b := r.limit.budget(len(out))
	return r.resume(out, &b)
}

// begin starts a step at lower: the next statement emitted starts there.
func (r *Receiver) begin(lower uint64) {
	// The step's counts are appended to the count slab, which is only
	// ever appended to: they stay valid in the emitted statement.
	// Zeroed, then set field by field: a composite literal is built on
	// the stack first and copied.
	st := &r.rel
	*st = releasing{}
	st.active, st.old, st.start = true, lower, len(r.countSlab)
	st.split.limit, st.split.lower = r.messageLimit(), lower
}

// resume goes on with the step under way (r.rel) until it ends or b is
// spent; when b is spent first the step stays under way.
func (r *Receiver) resume(out []cdc.Message, b *outBudget) ([]cdc.Message, error) {
	st := &r.rel
	for !r.done {
		if b.spent(len(out)) {
			return out, nil
		}
		if err := r.ensure(r.frontier); err != nil {
			return out, err
		}
		i, ok := r.cover.find(r.frontier)
		if !ok {
			break
		}
		if ts := r.times.get(r.frontier); ts != nil && ts.hasCount {
			if uint64(ts.len()) < ts.count {
				break
			}
			c := cdc.Count{Time: r.frontier, Count: ts.count}
			if st.next == 0 && st.split.full(r.countSlab[st.start:], c) {
				out = r.release(out, st.split.lower, c.Time, false, r.stepCounts(st.start))
				st.split.restart(c.Time)
				st.start, st.since = len(r.countSlab), 0
			}
			var finished bool
			if out, finished = r.emitTime(ts, out, b); !finished {
				return out, nil
			}
			st.start = r.keepCount(st.start, c)
			st.split.added(c)
			r.forget(r.frontier, ts)
			r.step(r.frontier)
			continue
		}
		// Covered with a zero count, so no update is held here: skip to the
		// next time with a count, or past the end of the span.
		last := r.cover.spans[i].last
		r.countTimes.popBelow(r.frontier)
		if r.countTimes.Len() > 0 && r.countTimes.Top() <= last {
			r.frontier = r.countTimes.Top()
			continue
		}
		r.step(last)
	}
	if r.frontier == st.old && !r.done {
		r.rel = releasing{}
		return out, nil
	}
	out = r.release(out, st.split.lower, r.frontier, r.done, r.stepCounts(st.start))
	r.rel = releasing{}
	r.trim()
	return out, r.fill()
}

// stepCounts returns the counts kept since start, or nil.
func (r *Receiver) stepCounts(start int) []cdc.Count {
	if n := len(r.countSlab); n > start {
		return r.countSlab[start:n:n]
	}
	return nil
}

// release appends the progress statement [lower, upper) (unbounded when
// done) with counts, and counts what it releases.
func (r *Receiver) release(out []cdc.Message, lower, upper uint64, done bool, counts []cdc.Count) []cdc.Message {
	r.stats.EmittedTimes += uint64(len(counts))
	for _, c := range counts {
		r.stats.EmittedUpdates += c.Count
	}
	// Written in place, field by field: a message built first is copied.
	out = append(out, cdc.Message{})
	m := &out[len(out)-1]
	m.Kind, m.Progress.Lower, m.Progress.Upper = cdc.KindProgress, lower, upper
	m.Progress.Unbounded, m.Progress.Counts = done, counts
	return out
}

// countBlock is how many counts a block of the count slab holds.
const countBlock = 4096

// keepCount appends c to the count slab, where the current step's counts
// start at start, and returns where they start now: when the block is
// full, the step's counts so far move to a new one.
func (r *Receiver) keepCount(start int, c cdc.Count) int {
	if len(r.countSlab) == cap(r.countSlab) {
		run := r.countSlab[start:]
		block := make([]cdc.Count, len(run), max(countBlock, 2*len(run)))
		copy(block, run)
		r.countSlab, start = block, 0
	}
	r.countSlab = append(r.countSlab, c)
	return start
}

// step moves the frontier just past t.
func (r *Receiver) step(t uint64) {
	if t == math.MaxUint64 {
		r.frontier, r.done = math.MaxUint64, true
		return
	}
	r.frontier = t + 1
}

// trim forgets coverage and statements wholly below the frontier.
func (r *Receiver) trim() {
	if r.done {
		r.cover.spans = nil
		r.countTimes = timeHeap{}
		r.zeroStmts = stmtHeap{}
		r.spanning, r.judged = nil, nil
		return
	}
	r.times.slide(r.frontier)
	r.cover.trim(r.frontier)
	r.countTimes.popBelow(r.frontier)
	r.zeroStmts.popBelow(r.frontier)
	for _, j := range r.judged {
		// A restored receiver keeps a record up to the last time for
		// good: the list is scanned without a call per record, and
		// rebuilt only when some record ends below the frontier.
		if j.Last < r.frontier {
			r.judged = slices.DeleteFunc(r.judged, func(j Judged) bool { return j.Last < r.frontier })
			break
		}
	}
}
