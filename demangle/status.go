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
}

// String says in plain words what the frontier waits for.
func (s Stuck) String() string {
	switch {
	case s.Done:
		return "the stream is complete: every time has been emitted"
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
	s := Stuck{Time: r.frontier, Covered: r.cover.covers(r.frontier)}
	if ts := r.times.get(r.frontier); ts != nil {
		s.Held = len(ts.updates)
		s.Expected = ts.count
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
