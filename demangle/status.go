package demangle

import (
	"fmt"
	"sort"
)

// Stuck says why the frontier does not move past its current time.
type Stuck struct {
	// Done is set when every time is complete; the other fields are then
	// zero.
	Done bool
	// Time is the first incomplete time: the frontier.
	Time uint64
	// Covered is set when some held progress statement speaks for Time;
	// Expected is then its count.
	Covered  bool
	Expected uint64
	// Held is the number of distinct updates held at Time.
	Held int
	// Releasing is set while a release is owed (see Receiver.Releasing):
	// the frontier waits for no message, only for the rest of the
	// release. Time is then the time being released (at or above the
	// reported frontier: the times between have been emitted but not the
	// statement about them), Covered is set, Held and Expected are its
	// updates, and Emitted says how many of them are emitted already.
	Releasing bool
	Emitted   int
}

// String says in plain words what the frontier waits for.
func (s Stuck) String() string {
	switch {
	case s.Done:
		return "the stream is complete: every time has been emitted"
	case s.Releasing:
		return fmt.Sprintf("time %d is being released: %d of its %d updates emitted, the rest owed", s.Time, s.Emitted, s.Held)
	case !s.Covered:
		return fmt.Sprintf("waiting for a progress statement covering time %d", s.Time)
	}
	return fmt.Sprintf("time %d holds %d of %d expected updates", s.Time, s.Held, s.Expected)
}

// Stuck reports the first incomplete time and what it waits for.
func (r *Receiver) Stuck() Stuck {
	if r.done {
		return Stuck{Done: true}
	}
	s := Stuck{Time: r.frontier, Covered: r.cover.covers(r.frontier), Releasing: r.rel.active}
	if ts := r.times.get(r.frontier); ts != nil {
		s.Held = len(ts.updates)
		s.Expected = ts.count
	}
	if s.Releasing {
		s.Emitted = r.rel.next
	}
	return s
}

// PendingTime is what the receiver holds about one time at or above the
// frontier.
type PendingTime struct {
	Time uint64
	// Known is set once a progress statement gave the time a count,
	// Expected.
	Known    bool
	Expected uint64
	// Held is the number of distinct updates held.
	Held int
}

// Pending lists the times with held updates or a known count, in time
// order. It costs time and memory in proportion to the pending state.
func (r *Receiver) Pending() []PendingTime {
	out := make([]PendingTime, 0, r.times.len())
	r.times.each(func(t uint64, ts *timeState) {
		out = append(out, PendingTime{Time: t, Known: ts.hasCount, Expected: ts.count, Held: len(ts.updates)})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// PendingSize returns the number of pending times (with held updates or a
// known count) and of distinct updates held.
func (r *Receiver) PendingSize() (times, updates int) {
	return r.times.len(), r.held
}

// ScanPending calls yield on each time Pending would list, in time order,
// holding only a window of times in memory at once: with a store, once
// the times below the horizon are yielded it forgets them (without
// releasing them) and loads the next window, until the store holds
// nothing more. What each time holds is what Pending would say, since a
// time's state depends only on the messages about it in arrival order.
// It stops with yield's error when yield fails.
//
// It consumes the receiver: afterwards the receiver no longer holds the
// times it listed, and it must not be used again. It is for a receiver
// built to be read, as recovery.Reader builds one.
func (r *Receiver) ScanPending(yield func(*PendingTime) error) error {
	for {
		list := r.Pending()
		for i := range list {
			if err := yield(&list[i]); err != nil {
				return err
			}
		}
		if r.store == nil || !r.spilled || r.done {
			return nil
		}
		for i := range list {
			r.drop(list[i].Time)
		}
		r.frontier = r.horizon // every time below it was listed
		r.trim()
		if err := r.loadNext(); err != nil {
			return err
		}
		r.deferred = nil // violations are not this scan's to report
	}
}
