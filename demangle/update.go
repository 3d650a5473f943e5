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
func (r *Receiver) takeUpdate(u *cdc.Update, at cdc.Pos) (Outcome, error) {
	ts := r.times.get(u.Time)
	var pr probe
	if ts != nil {
		var h *heldUpdate
		if h, pr = ts.find(&r.arena, u.Data); h != nil {
			if h.diff == u.Diff {
				return Duplicate, nil
			}
			return 0, r.updateViolation(ConflictingDiff, u, at, r.arena.message(h, u.Time), r.arena.pos(h),
				"the same data and time with diff %+d, earlier %+d", u.Diff, h.diff)
		}
		if ts.hasCount && uint64(ts.len()) >= ts.count {
			em, ep := ts.countFrom.ref()
			return 0, r.updateViolation(TooManyUpdates, u, at, em, ep,
				"time %d has count %d and already holds %d distinct updates", u.Time, ts.count, ts.len())
		}
	}
	if (ts == nil || !ts.hasCount) && r.cover.covers(u.Time) {
		em, ep := r.zeroStmts.zeroAt(u.Time).ref()
		return 0, r.updateViolation(UpdateAtZeroCount, u, at, em, ep,
			"a progress statement says time %d holds no update", u.Time)
	}
	if ts == nil {
		ts = r.state(u.Time, true)
	}
	r.bytes += ts.add(&r.arena, r.arena.hold(u.Data, u.Diff, at), pr)
	r.held++
	return Accepted, nil
}

func (r *Receiver) updateViolation(k ViolationKind, u *cdc.Update, at cdc.Pos,
	earlier cdc.Message, earlierAt cdc.Pos, format string, args ...any) error {
	return newViolation(k, u.Time, cdc.Message{Kind: cdc.KindUpdate, Update: *u}, at, earlier, earlierAt, format, args...)
}
