package demangle

import (
	"slices"

	"github.com/cdclog/cdclog/cdc"
)

// Releasing in parts. One step of the frontier can release any amount of
// output: a time of ten million updates is ten million records, and
// building them all in one slice took a gigabyte (cdc.Message is 104
// bytes) before the first was written. With an output limit
// (SetOutputLimit), Push stops appending once a call has appended that
// much, and the rest of the step is owed: Releasing says so, and each
// Continue appends the next part. The parts, put end to end, are the
// records the step would have released in one call, byte for byte: the
// order within a time is canonical, so it does not depend on where the
// release stopped.
//
// While a release is owed, Frontier reports the upper bound of the last
// progress statement emitted (the times below it are emitted, and their
// statement too), and HorizonState how many update records were emitted
// after that statement. That is what an owner needs to resume after a
// restart: a receiver at that frontier holding the same messages, told
// by Restore to skip that many records, owes exactly the rest. The
// order of a time's updates is computed once, when its release starts,
// and skipping into a time costs nothing but that order.

// releasing is the state of a step under way: where it started, where
// the current statement's counts start in the count slab and where it
// will be cut, how far the frontier time's updates have been emitted
// (next, in canonical order), and
// since, the update records emitted after the last statement. sorted is
// set once the frontier time's updates are in canonical order.
type releasing struct {
	active bool
	old    uint64
	start  int
	split  stepSplit
	sorted bool
	next   int
	since  uint64
}

// outputLimit is what one call of Push or Continue may append (0: no
// limit): records, and bytes of update data (8 more a record).
type outputLimit struct{ records, bytes int }

// outBudget is what is left of the limit during one call: base is where
// the call's output started in out, skip the records to drop before any
// is appended (Restore), and halt stops the call once they are dropped.
type outBudget struct {
	outputLimit
	base int
	used int
	skip uint64
	halt bool
}

func (l outputLimit) budget(base int) outBudget { return outBudget{outputLimit: l, base: base} }

// spent reports whether the call must stop, out holding n records.
func (b *outBudget) spent(n int) bool {
	if b.skip > 0 {
		return false
	}
	if b.halt {
		return true
	}
	return b.records > 0 && (n-b.base >= b.records || (b.bytes > 0 && b.used >= b.bytes))
}

func (b *outBudget) unlimited() bool { return b.records == 0 && b.skip == 0 && !b.halt }

// takes reports whether all of ts's updates can be appended at once, out
// holding n records: the limit, if any, is not reached by any of them (an
// ordinary time, of a few updates, nearly always fits), and then counts
// them as used.
func (b *outBudget) takes(ts *timeState, n int) bool {
	if b.unlimited() {
		return true
	}
	if b.skip > 0 || b.halt || len(ts.updates) > b.records-(n-b.base) {
		return false
	}
	used := b.used
	for i := range ts.updates {
		used += int(ts.updates[i].n) + 8
	}
	if b.bytes > 0 && used >= b.bytes {
		return false
	}
	b.used = used
	return true
}

// SetOutputLimit makes Push and Continue stop appending records once a
// call has appended records of them, or records whose update data take
// bytes (each counted at its data's length plus 8; 0: no byte limit).
// records 0 removes the limit, the default. A call appends at least one
// record when anything is owed, so releases always progress.
func (r *Receiver) SetOutputLimit(records, bytes int) {
	r.limit = outputLimit{records: max(records, 0), bytes: max(bytes, 0)}
	if r.limit.records == 0 {
		r.limit.bytes = 0
	}
}

// Releasing reports whether the output limit stopped a release part-way:
// the rest is owed, and Continue appends it. The caller calls Continue
// until it is false before pushing again (a Push while a release is owed
// first appends the rest of it, all of it).
func (r *Receiver) Releasing() bool { return r.rel.active }

// Continue appends the next part of the release under way to out, within
// the output limit, and returns it; it does nothing when none is under
// way. An error wraps ErrStore, as in Push.
func (r *Receiver) Continue(out []cdc.Message) ([]cdc.Message, error) {
	if !r.rel.active {
		return out, nil
	}
	b := r.limit.budget(len(out))
	return r.resume(out, &b)
}

// finishRelease appends all of the release under way, for a Push that
// comes while one is owed.
func (r *Receiver) finishRelease(out []cdc.Message) ([]cdc.Message, error) {
	if !r.rel.active {
		return out, nil
	}
	var b outBudget
	return r.resume(out, &b)
}

// emitTime appends the frontier time's updates, ts, to out in canonical
// order, from the first not yet emitted, and reports whether all of them
// were: b may stop it part-way.
func (r *Receiver) emitTime(ts *timeState, out []cdc.Message, b *outBudget) ([]cdc.Message, bool) {
	st := &r.rel
	n := len(ts.updates)
	if st.next == 0 && b.takes(ts, len(out)) {
		st.since += uint64(n)
		return ts.emit(&r.arena, out, r.frontier), true
	}
	if !st.sorted {
		ts.sortForRelease(&r.arena)
		st.sorted = true
	}
	for st.next < n {
		if b.skip > 0 {
			k := int(min(b.skip, uint64(n-st.next)))
			st.next += k
			st.since += uint64(k)
			b.skip -= uint64(k)
			continue
		}
		if b.spent(len(out)) {
			return out, false
		}
		// The rest of the time, or what is left of the limit.
		end := n
		if b.records > 0 {
			end = min(n, st.next+max(1, b.records-(len(out)-b.base)))
		}
		out = slices.Grow(out, end-st.next)
		for ; st.next < end; st.next++ {
			u := &ts.updates[st.next]
			out = append(out, r.arena.message(u, r.frontier))
			b.used += int(u.n) + 8
			st.since++
			if b.bytes > 0 && b.used >= b.bytes {
				st.next++
				break
			}
		}
	}
	st.sorted, st.next = false, 0
	return out, true
}
