package demangle

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/cdclog/cdclog/cdc"
)

// The horizon. A receiver with a Store holds in memory only the times from
// the frontier F up to its horizon H: a message about a time at or beyond
// H is handed to the store unjudged (an update, or the part of a
// statement beyond H), and taken back, in windows of times, when the
// frontier comes near. Without a store, or until what it holds first
// passes its budget, there is no horizon (spilled is false) and every
// time is in memory.
//
// What the receiver makes of a time depends only on the messages about
// that time in the order they arrived (a statement's claims are judged
// time by time), so where the horizon stands changes when a message is
// judged, never what becomes of it: the output is the same for any budget,
// store or crash, and a violation by a message beyond the horizon is
// reported when its time is loaded (ViolationError.Deferred).

// DefaultBudget is the memory, in bytes as the receiver counts them, that
// the held state of a receiver with a store may take before the owner is
// asked to shed (NeedShed).
const DefaultBudget = 32 << 20

// loadWindow is how many times, from the next time the store holds
// something about, one load brings into memory, and fillAhead how far
// past the frontier loads keep the horizon: so that what is loaded lands
// in the time index's window (timeIndex), where a time costs an array
// slot rather than a map entry (with windows of windowSize, loaded times
// fell past it and ingest of a held-back stream spent a quarter of its
// time in map operations).
const (
	loadWindow = windowSize / 2
	fillAhead  = windowSize / 2
)

// ErrStore is wrapped by the errors of the Store: the receiver's state is
// then undefined, and it must not be used again.
var ErrStore = errors.New("pending-state store failed")

// Judged says that every message numbered below Seq was judged for every
// time up to Last: a message the store delivers again (after Shed, or
// when a restart loads what a checkpoint held) is not reported or counted
// again.
type Judged struct{ Last, Seq uint64 }

// HorizonState is what an owner checkpoints, besides the frontier and the
// counters, to restore the receiver with Restore: where the horizon is,
// the next acceptance number, how many messages beyond the horizon are
// not judged yet, and which messages the store may deliver again that
// were judged already.
//
// Releasing says that a release was owed (see Receiver.Releasing), of
// which Released update records had been emitted after the last progress
// statement: Restore then leaves the receiver owing the same rest.
type HorizonState struct {
	Horizon   uint64
	Spilled   bool
	Seq       uint64
	Cold      int64
	Judged    []Judged
	Releasing bool
	Released  uint64
}

// HorizonState returns the receiver's horizon state, for a checkpoint.
func (r *Receiver) HorizonState() HorizonState {
	return HorizonState{Horizon: r.horizon, Spilled: r.spilled, Seq: r.seq, Cold: r.cold, Judged: slices.Clone(r.judged),
		Releasing: r.rel.active, Released: r.rel.since}
}

// addJudged records that every message accepted so far was judged for
// every time up to last, dropping the records that says less.
func (r *Receiver) addJudged(last uint64) {
	j := Judged{Last: last, Seq: r.seq}
	r.judged = slices.DeleteFunc(r.judged, func(o Judged) bool { return o.Last <= j.Last && o.Seq <= j.Seq })
	r.judged = append(r.judged, j)
}

// UseStore gives the receiver a store for what is beyond its budget:
// budget bytes of held state (0: DefaultBudget). It must be called
// before the receiver holds anything beyond the frontier.
func (r *Receiver) UseStore(s Store, budget int64) {
	if budget <= 0 {
		budget = DefaultBudget
	}
	r.store, r.budget = s, budget
	r.seq = max(r.seq, 1) // 0 marks what Shed hands back
}

// Seq returns the number the next accepted message will get (see
// Held.Seq); SetSeq sets it, for a receiver resumed from a checkpoint.
func (r *Receiver) Seq() uint64     { return r.seq }
func (r *Receiver) SetSeq(s uint64) { r.seq = s }

// Horizon returns the first time beyond what the receiver holds in memory
// and whether there is one (spilled): every time from it on is in the
// store.
func (r *Receiver) Horizon() (h uint64, spilled bool) { return r.horizon, r.spilled }

// Cold returns the number of messages handed to the store beyond the
// horizon and not yet taken back: duplicates among them included.
func (r *Receiver) Cold() int64 { return r.cold }

// Deferred returns the violations found among messages taken back from
// the store since the last call, and forgets them. Each is marked
// Deferred: its message was accepted when it arrived, beyond the
// horizon, and is dropped now.
func (r *Receiver) Deferred() []*ViolationError {
	d := r.deferred
	r.deferred = nil
	return d
}

// MemoryBytes returns the memory the held state takes, as the receiver
// counts it against its budget.
func (r *Receiver) MemoryBytes() int64 { return r.bytes }

// hold hands m, accepted at position at with from its first time beyond
// the horizon, to the store.
func (r *Receiver) hold(m cdc.Message, at cdc.Pos, from uint64) error {
	h := &r.holding // not a new one each time: it would escape to the heap
	*h = Held{Msg: m, At: at, Seq: r.seq, From: from}
	err := r.store.Hold(h)
	*h = Held{}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	if !r.more || from < r.next {
		r.next = from
	}
	r.more = true
	r.cold++
	return nil
}

// span puts s, whose claims from the horizon on are not applied yet, on
// the list of statements reaching past the horizon, kept in Seq order.
func (r *Receiver) span(s *stmt) {
	if s.spanning() {
		return
	}
	s.more().spanning = true
	i, _ := slices.BinarySearchFunc(r.spanning, s.seq, func(x *stmt, seq uint64) int {
		return cmp.Compare(x.seq, seq)
	})
	r.spanning = slices.Insert(r.spanning, i, s)
}

// spans reports whether a statement numbered seq is on the spanning list.
func (r *Receiver) spans(seq uint64) bool {
	_, found := slices.BinarySearchFunc(r.spanning, seq, func(x *stmt, seq uint64) int {
		return cmp.Compare(x.seq, seq)
	})
	return found
}

// ensure loads windows until t is in memory.
func (r *Receiver) ensure(t uint64) error {
	for r.spilled && t >= r.horizon {
		if err := r.loadNext(); err != nil {
			return err
		}
	}
	return nil
}

// fill loads windows while the horizon is less than fillAhead times past
// the frontier and the held state takes less than half the budget, so
// that the frontier finds the times it reaches in memory, and so do the
// messages about them.
func (r *Receiver) fill() error {
	for r.spilled && r.bytes < r.budget/2 && r.horizon-r.frontier < fillAhead {
		if err := r.loadNext(); err != nil {
			return err
		}
	}
	return nil
}

// loadNext loads the next window: from the horizon to loadWindow times
// past the next time the store holds something about (so that a gap
// costs one load), or to the end once the store holds nothing more.
func (r *Receiver) loadNext() error {
	last := uint64(math.MaxUint64)
	w := r.window
	if w == 0 {
		w = r.adapted
		if w == 0 {
			w = loadWindow
		}
	}
	if r.more {
		last = satAdd(max(r.horizon, r.next), w-1)
	}
	before := r.bytes
	if err := r.load(last); err != nil {
		return err
	}
	if r.window == 0 {
		r.adapted = fitWindow(w, r.bytes-before, r.budget)
	}
	return nil
}

// estimateWindow is the window of the first load after a shed: as many
// times as an eighth of the budget holds, at the bytes a time held on
// average (times: each time held, with its bytes), so that even the first
// load after the budget was passed stays within it.
func estimateWindow(times []timeBytes, budget int64) uint64 {
	var sum int64
	for _, x := range times {
		sum += x.b
	}
	if len(times) == 0 || sum <= 0 {
		return loadWindow
	}
	avg := max(1, sum/int64(len(times)))
	return min(loadWindow, max(1, uint64(budget/8/avg)))
}

// fitWindow is the window of the next load, after one of w times brought
// in loaded bytes: smaller when it took more than a quarter of the budget,
// so that a load does not bring in what the next shed drops again (and
// the next load reads again), larger again, up to loadWindow, when it took
// less than a sixteenth.
func fitWindow(w uint64, loaded, budget int64) uint64 {
	switch {
	case budget <= 0:
		return w
	case loaded > budget/4:
		return max(1, uint64(float64(w)*float64(budget/8)/float64(loaded)))
	case loaded < budget/16:
		return min(loadWindow, 2*w)
	}
	return w
}

// load brings the times from the horizon to last into memory: every
// message the store delivers for them and the claims there of the
// spanning statements, applied in the order the messages were accepted.
func (r *Receiver) load(last uint64) error {
	lo := r.horizon
	span := r.spanning
	i := 0
	applySpanning := func(below uint64) {
		for ; i < len(span) && span[i].seq < below; i++ {
			s := span[i]
			r.applyClaims(&s.p, s.pos, s.seq, lo, last, s)
		}
	}
	var added []*stmt
	next, more, err := r.store.Load(lo, last, func(h *Held) error {
		if h.Msg.Kind == cdc.KindProgress && h.Seq != 0 && r.spans(h.Seq) {
			return nil // delivered again: it is on the spanning list
		}
		applySpanning(h.Seq)
		if s := r.applyHeld(h, lo, last); s != nil {
			added = append(added, s)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	applySpanning(math.MaxUint64)
	r.spanning = slices.DeleteFunc(r.spanning, func(s *stmt) bool {
		if s.p.Last() <= last {
			s.rare.spanning = false
			return true
		}
		return false
	})
	for _, s := range added {
		r.span(s)
	}
	if last == math.MaxUint64 {
		// Everything is in memory again: no horizon.
		r.spilled, r.horizon, r.more = false, 0, false
		return nil
	}
	r.horizon, r.next, r.more = last+1, next, more
	return nil
}

// applyHeld judges a message the store delivered for the window [lo,
// last]: an update at a time there, or a statement's claims there. It
// returns the statement when it reaches past the window, for the
// spanning list.
func (r *Receiver) applyHeld(h *Held, lo, last uint64) *stmt {
	if h.Msg.Kind == cdc.KindUpdate {
		u := &h.Msg.Update
		if u.Time < r.frontier || u.Time < lo || u.Time > last {
			return nil
		}
		o, err := r.takeUpdate(u, h.At)
		if r.wasJudged(h.Seq, u.Time) {
			return nil
		}
		if h.Seq != 0 {
			r.cold--
		}
		switch {
		case err != nil:
			r.stats.Updates--
			r.stats.Violations++
			r.defer_(err)
		case o == Duplicate:
			r.stats.Updates--
			r.stats.Duplicates++
		}
		return nil
	}
	p := &h.Msg.Progress
	first := max(p.Lower, lo, r.frontier)
	if first <= last && !r.wasJudged(h.Seq, first) && h.Seq != 0 {
		r.cold--
	}
	s := r.applyClaims(p, h.At, h.Seq, lo, last, nil)
	if p.Last() > last {
		if s == nil {
			s = r.newStmt(p, h.At, h.Seq)
		}
		return s
	}
	return nil
}

// applyClaims judges the claims of p (numbered seq, held as s when it is
// on the spanning list) about the times in [lo, last] at or above the
// frontier, and returns the statement held for them, if any.
func (r *Receiver) applyClaims(p *cdc.Progress, at cdc.Pos, seq, lo, last uint64, s *stmt) *stmt {
	first := max(p.Lower, lo, r.frontier)
	end := min(p.Last(), last)
	if r.done || first > end {
		return s
	}
	res := r.claim(p, first, end, at, seq, s)
	if v := res.violation; v != nil && !r.wasJudged(seq, v.Time) {
		r.stats.Violations++
		r.defer_(v)
	}
	if s == nil {
		s = res.stmt
	}
	return s
}

// judged reports whether the message numbered seq was judged earlier for
// time t (see judgedPair).
func (r *Receiver) wasJudged(seq, t uint64) bool {
	for _, j := range r.judged {
		if t <= j.Last && seq < j.Seq {
			return true
		}
	}
	return false
}

// defer_ records a violation found in a message taken back from the
// store, with copies of both messages: the store's data is valid only
// during the load.
func (r *Receiver) defer_(err error) {
	var v *ViolationError
	if errors.As(err, &v) {
		v.Deferred = true
		v.Msg, v.Earlier = cloneMessage(v.Msg), cloneMessage(v.Earlier)
		r.deferred = append(r.deferred, v)
	}
}

// cloneMessage returns m with its own copies of its data and counts.
func cloneMessage(m cdc.Message) cdc.Message {
	m.Update.Data = slices.Clone(m.Update.Data)
	m.Progress.Counts = slices.Clone(m.Progress.Counts)
	return m
}

// NeedShed reports whether the held state has passed the budget by
// enough, a quarter of it, that Shed would give some back: what is held
// about the frontier's own time always stays in memory. It is false while
// a release is owed: the step's memory is given back as it is released.
func (r *Receiver) NeedShed() bool {
	if r.store == nil || r.bytes <= r.budget || r.done || r.rel.active {
		return false
	}
	atFrontier := int64(0)
	if ts := r.times.get(r.frontier); ts != nil {
		atFrontier = ts.bytes
	}
	return r.bytes-atFrontier >= r.budget/4
}

// timeBytes is a time the receiver holds and the bytes it holds about it.
type timeBytes struct {
	t uint64
	b int64
}

// Shed moves the horizon down, so that what is held in memory takes at
// most half the budget (or only the frontier's time), and hands what it
// held about the times beyond to the store (Store.Shed). It does nothing
// when there is nothing to give back. The durable processor calls it
// between group commits, once they are all durable, because its store,
// the write-ahead log, must then hold everything it drops.
func (r *Receiver) Shed() error {
	if r.store == nil || r.done {
		return nil
	}
	var times []timeBytes
	r.times.each(func(t uint64, ts *timeState) { times = append(times, timeBytes{t, ts.bytes}) })
	slices.SortFunc(times, func(a, b timeBytes) int {
		return cmp.Compare(a.t, b.t)
	})
	keep, from, found := int64(0), uint64(0), false
	for _, x := range times {
		if x.t > r.frontier && keep+x.b > r.budget/2 {
			from, found = x.t, true
			break
		}
		keep += x.b
	}
	if !found {
		return nil
	}
	if r.window == 0 {
		r.adapted = estimateWindow(times, r.budget)
	}
	last := uint64(math.MaxUint64)
	if r.spilled {
		last = r.horizon - 1
	}
	r.addJudged(last)
	if err := r.store.Shed(from, r.spill(from)); err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	for _, x := range times {
		if x.t >= from {
			r.drop(x.t)
		}
	}
	r.cover.cut(from)
	r.countTimes.keepBelow(from)
	r.zeroStmts.keepIf(func(s *stmt) bool { return s.p.Lower < from })
	r.horizon, r.spilled, r.next, r.more = from, true, from, true
	return nil
}

// spill yields what the receiver holds about the times from `from` on,
// as messages for the store: each update (numbered 0, see Held.Seq), then
// each statement with a claim held there that is not on the spanning
// list (the receiver keeps those), in the order they were accepted.
func (r *Receiver) spill(from uint64) iter.Seq[*Held] {
	return func(yield func(*Held) bool) {
		var stmts []*stmt
		seen := map[*stmt]bool{}
		note := func(s *stmt) {
			if s != nil && !s.spanning() && !seen[s] && s.p.Last() >= from {
				seen[s] = true
				stmts = append(stmts, s)
			}
		}
		var h Held
		stop := false
		r.times.each(func(t uint64, ts *timeState) {
			if stop || t < from {
				return
			}
			if ts.hasCount {
				note(ts.countFrom)
			}
			for i := range ts.updates {
				u := &ts.updates[i]
				h = Held{Msg: r.arena.message(u, t), At: r.arena.pos(u), From: t}
				if !yield(&h) {
					stop = true
					return
				}
			}
		})
		if stop {
			return
		}
		for _, it := range r.zeroStmts.items {
			note(it.val)
		}
		slices.SortFunc(stmts, func(a, b *stmt) int {
			return cmp.Compare(a.seq, b.seq)
		})
		for _, s := range stmts {
			h = Held{Msg: cdc.Message{Kind: cdc.KindProgress, Progress: s.p}, At: s.pos, Seq: s.seq,
				From: max(s.p.Lower, from)}
			if !yield(&h) {
				return
			}
		}
	}
}

// drop forgets time t's state without releasing it (Shed).
func (r *Receiver) drop(t uint64) {
	ts := r.times.get(t)
	if ts == nil {
		return
	}
	r.held -= ts.len()
	r.bytes -= ts.bytes
	for i := range ts.updates {
		r.arena.release(&ts.updates[i])
	}
	r.times.del(t)
}

// Restore brings back into memory, after Resume and UseStore, what a
// receiver held in memory when its state was checkpointed (s, from
// HorizonState): every message the store holds about the times from the
// frontier to the horizon (all of them when not spilled), as judged then:
// nothing is reported or counted again. When s says a release was owed,
// the receiver owes the same rest of it (see release.go).
func (r *Receiver) Restore(s HorizonState) error {
	if r.store == nil {
		return errors.New("demangle: Restore needs a store")
	}
	r.seq = max(s.Seq, 1)
	if r.done {
		return nil
	}
	last := uint64(math.MaxUint64)
	if s.Spilled {
		if s.Horizon <= r.frontier {
			return fmt.Errorf("demangle: horizon %d is not above the frontier %d", s.Horizon, r.frontier)
		}
		last = s.Horizon - 1
	}
	r.judged = append(slices.Clone(s.Judged), Judged{Last: last, Seq: r.seq})
	r.spilled, r.horizon, r.next, r.more = true, r.frontier, r.frontier, true
	if err := r.load(last); err != nil {
		return err
	}
	r.cold = s.Cold
	b := r.limit.budget(0)
	if s.Releasing {
		// The release owed at the checkpoint: the same step from the
		// same frontier, its first Released records already emitted.
		b = outBudget{skip: s.Released, halt: true}
	}
	r.begin(r.frontier)
	out, err := r.resume(nil, &b)
	if err != nil {
		return err
	}
	if len(out) > 0 || b.skip > 0 || r.rel.active != s.Releasing {
		return errors.New("demangle: the restored state releases other output than the checkpoint says: it is not the one checkpointed")
	}
	return nil
}
