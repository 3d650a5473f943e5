package demangle

import "github.com/cdclog/cdclog/cdc"

// pushUpdate holds u unless it is stale, a duplicate or a violation. An
// update at or beyond the horizon is kept in the store, unjudged, until
// its time comes into memory (see horizon.go).
func (r *Receiver) pushUpdate(u *cdc.Update, at cdc.Pos) (Outcome, error) {
	if r.done || u.Time < r.frontier {
		return Stale, nil
	}
	if r.spilled && u.Time >= r.horizon {
		return Accepted, r.hold(cdc.Message{Kind: cdc.KindUpdate, Update: *u}, at, u.Time)
	}
	return r.takeUpdate(u, at)
}

// takeUpdate judges u, at a time in memory, against what is held there.
// The violations are built out of line (updateConflict, tooMany,
// atZero), so that the path of an accepted update stays small.
func (r *Receiver) takeUpdate(u *cdc.Update, at cdc.Pos) (Outcome, error) {
	ts := r.times.get(u.Time)
	var pr probe
	if ts != nil {
		var h *heldUpdate
		if h, pr = ts.find(&r.arena, u.Data); h != nil {
			if h.diff == u.Diff {
				return Duplicate, nil
			}
			return 0, r.updateConflict(u, at, h)
		}
		if ts.hasCount && uint64(ts.len()) >= ts.count {
			return 0, r.tooMany(u, at, ts)
		}
	}
	if (ts == nil || !ts.hasCount) && r.cover.covers(u.Time) {
		return 0, r.atZero(u, at)
	}
	if ts == nil {
		ts = r.state(u.Time, true)
	}
	r.bytes += ts.add(&r.arena, u.Data, u.Diff, &at, pr)
	r.held++
	return Accepted, nil
}

// updateConflict is the violation of u, whose data is held at its time
// as h with another diff.
func (r *Receiver) updateConflict(u *cdc.Update, at cdc.Pos, h *heldUpdate) error {
	return r.updateViolation(ConflictingDiff, u, at, r.arena.message(h, u.Time), r.arena.pos(h),
		"the same data and time with diff %+d, earlier %+d", u.Diff, h.diff)
}

// tooMany is the violation of u, a new update at a time, ts, that holds
// as many as its count says.
func (r *Receiver) tooMany(u *cdc.Update, at cdc.Pos, ts *timeState) error {
	em, ep := ts.countFrom.ref()
	return r.updateViolation(TooManyUpdates, u, at, em, ep,
		"time %d has count %d and already holds %d distinct updates", u.Time, ts.count, ts.len())
}

// atZero is the violation of u, at a time a statement gave count 0.
func (r *Receiver) atZero(u *cdc.Update, at cdc.Pos) error {
	em, ep := r.zeroStmts.zeroAt(u.Time).ref()
	return r.updateViolation(UpdateAtZeroCount, u, at, em, ep,
		"a progress statement says time %d holds no update", u.Time)
}

func (r *Receiver) updateViolation(k ViolationKind, u *cdc.Update, at cdc.Pos,
	earlier cdc.Message, earlierAt cdc.Pos, format string, args ...any) error {
	return newViolation(k, u.Time, cdc.Message{Kind: cdc.KindUpdate, Update: *u}, at, earlier, earlierAt, format, args...)
}
