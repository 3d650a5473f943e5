package demangle

import (
	"math"
	"slices"

	"github.com/cdclog/cdclog/cdc"
)

// A progress statement is a set of claims, one per time it covers: "time
// t holds c distinct updates" (c = 0 when t is not listed). Each claim is
// judged on its own, against what the receiver holds about that time, so
// that what the receiver makes of a time depends only on the messages
// about that time, in the order they arrived (see "Violations" in the
// package documentation).

// pushProgress holds the claims of p that are new, rejecting those that
// contradict what is held. Only the part of p at or above the frontier
// matters; the part at or above the horizon is kept in the store (see
// horizon.go) and judged when its times come into memory.
func (r *Receiver) pushProgress(p *cdc.Progress, at cdc.Pos) (Outcome, error) {
	last := p.Last()
	if r.done || last < r.frontier {
		return Stale, nil
	}
	first := max(p.Lower, r.frontier)
	if !r.spilled || last < r.horizon {
		if o, ok := r.claimSingle(p, first, last, at, r.seq); ok {
			return o, nil
		}
		return r.claimOutcome(r.claim(p, first, last, at, r.seq, nil))
	}
	// Some of p is beyond the horizon: that part is held whole and
	// judged claim by claim when its times come into memory.
	if first >= r.horizon {
		return Accepted, r.hold(cdc.Message{Kind: cdc.KindProgress, Progress: *p}, at, first)
	}
	res := r.claim(p, first, r.horizon-1, at, r.seq, nil)
	s := res.stmt
	if s == nil {
		s = r.newStmt(p, at, r.seq)
	}
	r.span(s)
	_, err := r.claimOutcome(res)
	return Accepted, err
}

// claimResult is what claim did with a statement's claims about a range.
type claimResult struct {
	// held is set when some claim was new; stmt is then the held
	// statement (nil when nothing new was held).
	held bool
	stmt *stmt
	// violation is the contradiction at the smallest time, if any;
	// others counts the rejected claims besides it.
	violation *ViolationError
	others    int
}

// claimOutcome turns a claim's result into Push's: accepted when some
// claim was held (with the violation, if any, for the claims rejected),
// a duplicate when nothing was new, rejected when every new claim was.
func (r *Receiver) claimOutcome(res claimResult) (Outcome, error) {
	switch {
	case res.violation != nil && res.held:
		return Accepted, res.violation
	case res.violation != nil:
		return 0, res.violation
	case res.held:
		return Accepted, nil
	}
	return Duplicate, nil
}

// claim judges p's claims about the times in [first, last], which are
// all in memory (at or above the frontier, below the horizon), and holds
// those that are new and contradict nothing. seq is p's acceptance
// number, for the held statement; s, when not nil, is the statement
// already held for p's other claims (one reaching past the horizon).
func (r *Receiver) claim(p *cdc.Progress, first, last uint64, at cdc.Pos, seq uint64, s *stmt) claimResult {
	var res claimResult
	rejected := r.checkProgress(p, first, last, at, &res)
	if len(rejected) == 0 {
		if r.cover.contains(first, last) {
			return res
		}
		if s == nil && isSingle(p, first, last) {
			res.held, res.stmt = true, r.holdSingle(p, at, seq, r.times.get(first))
			r.cover.add(first, first)
			return res
		}
	} else if r.coveredExcept(first, last, rejected) {
		return res
	}
	if s == nil {
		s = r.newStmt(p, at, seq)
	}
	if len(rejected) > 0 {
		x := s.more()
		x.rejected = append(x.rejected, rejected...)
		slices.Sort(x.rejected)
		x.rejected = slices.Compact(x.rejected)
	}
	res.held, res.stmt = true, s
	listed := uint64(0)
	for _, c := range s.p.Counts {
		if c.Time < first || c.Time > last {
			continue
		}
		listed++
		if r.cover.covers(c.Time) || s.rejects(c.Time) {
			continue // checked equal above, or rejected
		}
		ts := r.state(c.Time, true)
		ts.count, ts.hasCount, ts.countFrom = c.Count, true, s
		r.countTimes.push(c.Time)
	}
	lo := first
	for _, t := range rejected {
		if t > lo {
			r.cover.add(lo, t-1)
		}
		lo = t + 1
	}
	if len(rejected) == 0 || rejected[len(rejected)-1] < last {
		r.cover.add(lo, last)
	}
	if span := last - first; span == math.MaxUint64 || span+1 > listed {
		r.zeroStmts.push(s) // gives some time a zero count
	}
	return res
}

// coveredExcept reports whether every time of [first, last] but the
// sorted times skip is covered already.
func (r *Receiver) coveredExcept(first, last uint64, skip []uint64) bool {
	lo := first
	for _, t := range skip {
		if t > lo && !r.cover.contains(lo, t-1) {
			return false
		}
		lo = t + 1
	}
	return skip[len(skip)-1] >= last || r.cover.contains(lo, last)
}

// checkProgress judges p's claims about [first, last] against the held
// state without changing anything. It returns the times whose claim
// contradicts what is held, sorted, and sets res.violation to the
// contradiction at the smallest of them (res.others counts the rest).
func (r *Receiver) checkProgress(p *cdc.Progress, first, last uint64, at cdc.Pos, res *claimResult) []uint64 {
	var rejected []uint64
	note := func(v *ViolationError) {
		rejected = append(rejected, v.Time)
		if res.violation == nil || v.Time < res.violation.Time {
			res.violation = v
		}
	}
	for _, c := range p.Counts {
		if c.Time >= first && c.Time <= last {
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
	if len(rejected) > 1 {
		slices.Sort(rejected)
		res.others = len(rejected) - 1
	}
	return rejected
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
	case ts != nil && uint64(ts.len()) > c:
		h := ts.last()
		return r.progressViolation(TooManyUpdates, p, t, at, r.arena.message(h, t), r.arena.pos(h),
			"time %d given count %d but %d distinct updates are held", t, c, ts.len())
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
	case ts.len() > 0:
		h := ts.first()
		return r.progressViolation(UpdateAtZeroCount, p, t, at, r.arena.message(h, t), r.arena.pos(h),
			"time %d given count 0 but %d distinct updates are held", t, ts.len())
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
func (r *Receiver) newStmt(p *cdc.Progress, at cdc.Pos, seq uint64) *stmt {
	if len(r.stmts) == 0 {
		r.stmts = make([]stmt, stmtBlock)
	}
	s := &r.stmts[0]
	r.stmts = r.stmts[1:]
	*s = stmt{p: *p, pos: at, seq: seq}
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

// claimSingle is claim, from pushProgress, for the commonest statements:
// from the frontier on (first) they speak for one time only, with p's
// one count or with none (claimZero). It decides the two common
// outcomes, a new claim and a duplicate, with one lookup of the time and
// one search of the coverage, and reports false for every other
// statement and claim (one contradicting what is held), which claim
// then judges.
func (r *Receiver) claimSingle(p *cdc.Progress, first, last uint64, at cdc.Pos, seq uint64) (Outcome, bool) {
	if first != last {
		return 0, false
	}
	if len(p.Counts) == 0 {
		return r.claimZero(p, first, at, seq)
	}
	if !isSingle(p, first, last) {
		return 0, false
	}
	c := p.Counts[0]
	ts := r.times.get(c.Time)
	i, covered := r.cover.find(c.Time)
	switch {
	case ts != nil && ts.hasCount:
		// The same count, covered: a duplicate.
		return Duplicate, covered && ts.count == c.Count
	case covered || ts != nil && uint64(ts.len()) > c.Count:
		return 0, false
	}
	r.holdSingle(p, at, seq, ts)
	r.cover.addAt(i, c.Time)
	return Accepted, true
}

// claimZero is claimSingle for a statement that from the frontier on
// speaks for time t only, and gives it no update. When t has no state,
// nothing held can contradict it: it is new unless t is covered, a
// duplicate then. A state (held updates, a count) is left to claim.
func (r *Receiver) claimZero(p *cdc.Progress, t uint64, at cdc.Pos, seq uint64) (Outcome, bool) {
	if r.times.get(t) != nil {
		return 0, false
	}
	i, covered := r.cover.find(t)
	if covered {
		return Duplicate, true
	}
	s := r.newStmt(p, at, seq)
	r.cover.addAt(i, t)
	r.zeroStmts.push(s) // gives t a zero count
	return Accepted, true
}

// isSingle reports whether p, from first to last, speaks for one time
// only, with a count (holdSingle's shape).
func isSingle(p *cdc.Progress, first, last uint64) bool {
	return first == last && last == p.Last() && len(p.Counts) == 1 && p.Counts[0].Time == first
}

// holdSingle holds a statement that, from the frontier on, speaks for one
// time only, with a non-zero count: the commonest shape. Only that time's
// state, ts (nil when it has none yet), refers to it, so it is kept there
// rather than allocated (and it is never one that reaches past the
// horizon, which the receiver keeps beyond the time's life). The caller
// covers the time.
func (r *Receiver) holdSingle(p *cdc.Progress, at cdc.Pos, seq uint64, ts *timeState) *stmt {
	c := p.Counts[0]
	if ts == nil {
		ts = r.state(c.Time, true)
	}
	// Field by field: a composite literal is built on the stack first.
	s := &ts.own
	s.p, s.pos, s.seq, s.rare, s.one[0] = *p, at, seq, nil, c
	s.p.Counts = s.one[:]
	ts.count, ts.hasCount, ts.countFrom = c.Count, true, &ts.own
	r.countTimes.push(c.Time)
	return &ts.own
}
