package demangle

import (
	"math"

	"github.com/cdclog/cdclog/cdc"
)

// pushProgress holds p unless it is stale, adds nothing, or contradicts
// what is held. Only the part of p at or above the frontier matters.
func (r *Receiver) pushProgress(p *cdc.Progress, at cdc.Pos) (Outcome, error) {
	last := p.Last()
	if r.done || last < r.frontier {
		return Stale, nil
	}
	first := max(p.Lower, r.frontier)
	if err := r.checkProgress(p, first, last, at); err != nil {
		return 0, err
	}
	if r.cover.contains(first, last) {
		return Duplicate, nil
	}
	if first == last && len(p.Counts) == 1 && p.Counts[0].Time == first {
		r.holdSingle(p, at)
		return Accepted, nil
	}
	s := r.newStmt(p, at)
	listed := uint64(0)
	for _, c := range s.p.Counts {
		if c.Time < first {
			continue
		}
		listed++
		if r.cover.covers(c.Time) {
			continue // checked equal above
		}
		ts := r.state(c.Time, true)
		ts.count, ts.hasCount, ts.countFrom = c.Count, true, s
		r.countTimes.push(c.Time)
	}
	r.cover.add(first, last)
	if span := last - first; span == math.MaxUint64 || span+1 > listed {
		r.zeroStmts.push(s) // gives some time a zero count
	}
	return Accepted, nil
}

// checkProgress looks for a contradiction between p, restricted to
// [first, last], and the held state, without changing anything. When there
// are several, it reports the one at the smallest time.
func (r *Receiver) checkProgress(p *cdc.Progress, first, last uint64, at cdc.Pos) error {
	var worst *ViolationError
	note := func(v *ViolationError) {
		if worst == nil || v.Time < worst.Time {
			worst = v
		}
	}
	for _, c := range p.Counts {
		if c.Time >= first {
			if v := r.checkCount(p, c.Time, c.Count, at); v != nil {
				note(v)
			}
		}
	}
	// Times p gives a zero count: only those with held state can conflict.
	check := func(t uint64, ts *timeState) {
		if p.CountAt(t) == 0 {
			if v := r.checkZero(p, t, ts, at); v != nil {
				note(v)
			}
		}
	}
	switch {
	case r.times.len() == 0:
	case last-first < r.times.scanCost():
		for t := first; ; t++ {
			if ts := r.times.get(t); ts != nil {
				check(t, ts)
			}
			if t == last {
				break
			}
		}
	default:
		r.times.each(func(t uint64, ts *timeState) {
			if t >= first && t <= last {
				check(t, ts)
			}
		})
	}
	if worst == nil {
		return nil
	}
	return worst
}

// checkCount checks p's count c for time t against what is held.
func (r *Receiver) checkCount(p *cdc.Progress, t, c uint64, at cdc.Pos) *ViolationError {
	ts := r.times.get(t)
	switch {
	case ts != nil && ts.hasCount:
		if ts.count != c {
			em, ep := ts.countFrom.ref()
			return r.progressViolation(ConflictingCounts, p, t, at, em, ep,
				"time %d given count %d, earlier %d", t, c, ts.count)
		}
	case r.cover.covers(t):
		em, ep := r.zeroStmts.zeroAt(t).ref()
		return r.progressViolation(ConflictingCounts, p, t, at, em, ep,
			"time %d given count %d, earlier 0", t, c)
	case ts != nil && uint64(len(ts.updates)) > c:
		h := &ts.updates[len(ts.updates)-1]
		return r.progressViolation(TooManyUpdates, p, t, at, h.message(t), h.pos,
			"time %d given count %d but %d distinct updates are held", t, c, len(ts.updates))
	}
	return nil
}

// checkZero checks p's zero count for time t against its held state.
func (r *Receiver) checkZero(p *cdc.Progress, t uint64, ts *timeState, at cdc.Pos) *ViolationError {
	switch {
	case ts.hasCount:
		em, ep := ts.countFrom.ref()
		return r.progressViolation(ConflictingCounts, p, t, at, em, ep,
			"time %d given count 0, earlier %d", t, ts.count)
	case len(ts.updates) > 0:
		h := &ts.updates[0]
		return r.progressViolation(UpdateAtZeroCount, p, t, at, h.message(t), h.pos,
			"time %d given count 0 but %d distinct updates are held", t, len(ts.updates))
	}
	return nil
}

func (r *Receiver) progressViolation(k ViolationKind, p *cdc.Progress, t uint64, at cdc.Pos,
	earlier cdc.Message, earlierAt cdc.Pos, format string, args ...any) *ViolationError {
	return newViolation(k, t, cdc.Message{Kind: cdc.KindProgress, Progress: *p}, at, earlier, earlierAt, format, args...)
}

// stmtBlock is how many statements are allocated at once.
const stmtBlock = 256

// newStmt holds a copy of p (the caller may reuse p's counts), allocated
// from a block of statements to spare the allocator.
func (r *Receiver) newStmt(p *cdc.Progress, at cdc.Pos) *stmt {
	if len(r.stmts) == 0 {
		r.stmts = make([]stmt, stmtBlock)
	}
	s := &r.stmts[0]
	r.stmts = r.stmts[1:]
	*s = stmt{p: *p, pos: at}
	switch len(p.Counts) {
	case 0:
		s.p.Counts = nil
	case 1:
		s.one[0] = p.Counts[0]
		s.p.Counts = s.one[:]
	default:
		s.p.Counts = append([]cdc.Count(nil), p.Counts...)
	}
	return s
}

// holdSingle holds a statement that, from the frontier on, speaks for one
// time only, with a non-zero count: the commonest shape. Only that time's
// state refers to it, so it is kept there rather than allocated.
func (r *Receiver) holdSingle(p *cdc.Progress, at cdc.Pos) {
	c := p.Counts[0]
	ts := r.state(c.Time, true)
	ts.own = stmt{p: *p, pos: at, one: [1]cdc.Count{c}}
	ts.own.p.Counts = ts.own.one[:]
	ts.count, ts.hasCount, ts.countFrom = c.Count, true, &ts.own
	r.countTimes.push(c.Time)
	r.cover.add(c.Time, c.Time)
}
