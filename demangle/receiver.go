package demangle

import (
	"errors"
	"fmt"

	"github.com/cdclog/cdclog/cdc"
)

// Outcome says what Push did with a message it did not reject.
type Outcome uint8

// The outcomes of Push.
const (
	// Accepted: the message told the receiver something new.
	Accepted Outcome = iota + 1
	// Duplicate: the receiver already held everything the message says.
	Duplicate
	// Stale: the message is only about times below the frontier, which are
	// complete and emitted; it is dropped like a duplicate.
	Stale
)

// String returns "accepted", "duplicate" or "stale".
func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case Duplicate:
		return "duplicate"
	case Stale:
		return "stale"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// ErrNaive is returned for a finish message: finish belongs to naive
// streams, which must go through cdclog convert first.
var ErrNaive = errors.New("finish messages belong to naive streams; convert them with 'cdclog convert' first")

// ErrInvalid is wrapped by errors for messages that break the format rules
// (zero diff, an empty range, unsorted counts); decoders never produce them,
// but messages built in code can.
var ErrInvalid = errors.New("invalid message")

// Receiver is the protocol's receiver state machine. The zero value is a
// receiver with frontier 0. A Receiver is not safe for concurrent use.
type Receiver struct {
	frontier uint64
	// done is set once every time, up to cdc.MaxTime, is complete.
	done bool

	times      timeIndex
	countTimes timeHeap
	cover      coverage
	zeroStmts  stmtHeap
	// held is the number of distinct updates held.
	held int
	// free keeps emptied time states for reuse, and arena is where held
	// data is copied: both spare the allocator on the hot path.
	free  []*timeState
	arena arena
	stmts []stmt
	// countSlab holds emitted statements' counts (see keepCount).
	countSlab []cdc.Count

	stats Stats
	// maxMessage, when set, replaces cdc.MaxMessageSize as the size an
	// emitted statement may not exceed (tests lower it).
	maxMessage int

	// seq numbers the accepted messages (see Held.Seq).
	seq uint64
	// bytes is what the held state costs, as counted against budget.
	bytes int64

	// The horizon (see horizon.go): with a store, once spilled, the times
	// from horizon on are in the store. next is at most the first time
	// the store holds something about, when more says it holds anything;
	// cold counts the messages handed to it not taken back yet.
	store   Store
	budget  int64
	window  uint64 // times a load brings in beyond the next held one (0: loadWindow)
	adapted uint64 // the window loads use when window is 0 (0: loadWindow), fitted to the budget
	spilled bool
	horizon uint64
	next    uint64
	more    bool
	cold    int64
	// spanning lists, by seq, the statements whose claims from the
	// horizon on are still to be applied.
	spanning []*stmt
	// judged say which messages the store may deliver again that
	// were judged already; deferred holds the violations found in
	// messages taken back from the store, for Deferred.
	judged   []Judged
	deferred []*ViolationError
	holding  Held // what hold hands the store

	// rel is the step under way, limit what a call may release (see
	// release.go).
	rel   releasing
	limit outputLimit
}

// maxFree bounds the reusable time states kept.
const maxFree = 1024

// New returns a receiver whose frontier starts at start: times below it are
// taken as complete and already emitted.
func New(start uint64) *Receiver {
	r := &Receiver{frontier: start, seq: 1}
	r.times.base = start
	return r
}

// Frontier returns the frontier F and whether the stream is over (every time
// is complete, so F is past cdc.MaxTime and t is meaningless).
func (r *Receiver) Frontier() (t uint64, done bool) {
	if r.rel.active {
		// Part of a step is owed: its statement ends where the last one
		// emitted did (see release.go).
		return r.rel.split.lower, false
	}
	return r.frontier, r.done
}

// Push offers one message at position at. It appends whatever the message
// releases (complete times' updates and one progress statement) to out and
// returns it. A rejected message leaves the receiver unchanged and returns
// a *ViolationError, ErrNaive or an error wrapping ErrInvalid. A progress
// statement some of whose claims contradict what is held returns the
// *ViolationError for them with Outcome Accepted when its other claims
// were held (see "Violations" in the package documentation): it was
// accepted, in part. An error wrapping ErrStore means that the store
// failed; the receiver must not be used again.
//
// Violations found in messages taken back from the store during the push
// are not returned: see Deferred.
//
// An update's Data must be its canonical JSON encoding (cdc.AppendCanonical;
// the cdc decoders produce it): the receiver compares data by its bytes and
// neither checks nor rewrites them, so {"b":2,"a":1} and {"a":1,"b":2}
// pushed as they are would be two data, and bytes that are not JSON would
// be released as they are. recovery.Processor brings data to that form
// before it pushes.
func (r *Receiver) Push(out []cdc.Message, m *cdc.Message, at cdc.Pos) ([]cdc.Message, Outcome, error) {
	if err := m.Validate(); err != nil {
		return out, 0, fmt.Errorf("%s: %w: %v", at, ErrInvalid, err)
	}
	if r.rel.active {
		var err error
		if out, err = r.finishRelease(out); err != nil {
			return out, 0, err
		}
	}
	var (
		o   Outcome
		err error
	)
	switch m.Kind {
	case cdc.KindUpdate:
		o, err = r.pushUpdate(&m.Update, at)
	case cdc.KindProgress:
		o, err = r.pushProgress(&m.Progress, at)
	default:
		return out, 0, fmt.Errorf("%s: %w", at, ErrNaive)
	}
	if err != nil && errors.Is(err, ErrStore) {
		return out, 0, err
	}
	if err != nil {
		r.stats.Violations++
	}
	if o == 0 {
		return out, 0, err
	}
	r.stats.count(m.Kind, o)
	if o == Accepted {
		r.seq++
		if r.mayAdvance(m) {
			var aerr error
			if out, aerr = r.advance(out); aerr != nil {
				return out, o, aerr
			}
		}
	}
	return out, o, err
}

// mayAdvance reports whether accepting m can move the frontier. The
// frontier was as far as it could go before m, so only a change at the
// frontier's own time can move it: an update there, or a statement
// covering it, and not while that time is known to wait for more
// updates (frontierWaits).
func (r *Receiver) mayAdvance(m *cdc.Message) bool {
	if m.Kind == cdc.KindUpdate {
		return m.Update.Time == r.frontier && !r.frontierWaits(true)
	}
	return m.Progress.Covers(r.frontier) && !r.frontierWaits(false)
}

// frontierWaits reports that the frontier's time, in memory, is known
// to hold fewer updates than its count, or, when uncounted is set, to
// have no count yet: a step could not move, and the common cases of an
// update at the frontier or a statement about it then skip starting a
// step only to abandon it. uncounted is for an update just accepted
// there: the time holds no count, so no statement covers it (the update
// would have been rejected as one at a zero count). It answers false
// whenever it is not sure (a spilled receiver may have to load the time
// first).
func (r *Receiver) frontierWaits(uncounted bool) bool {
	if r.spilled {
		return false
	}
	ts := r.times.get(r.frontier)
	if ts == nil {
		return false
	}
	if !ts.hasCount {
		return uncounted
	}
	return uint64(ts.len()) < ts.count
}

// state returns the state of time t, creating it when create is set.
func (r *Receiver) state(t uint64, create bool) *timeState {
	ts := r.times.get(t)
	if ts == nil && create {
		if n := len(r.free); n > 0 {
			ts, r.free = r.free[n-1], r.free[:n-1]
		} else {
			ts = &timeState{}
		}
		ts.bytes = timeCost
		r.bytes += timeCost
		r.times.put(t, ts)
	}
	return ts
}

// forget drops time t's state, ts, once it has been emitted. Go maps
// never give memory back, so when the map has shrunk to a quarter of its
// peak it is rebuilt: memory follows what is pending, not what was seen.
// A reused state's updates are not cleared: a held update holds no
// pointer, and add writes each one whole.
func (r *Receiver) forget(t uint64, ts *timeState) {
	r.held -= len(ts.updates)
	r.bytes -= ts.bytes
	for i := range ts.updates {
		r.arena.release(&ts.updates[i])
	}
	if len(r.free) < maxFree && cap(ts.updates) <= indexThreshold {
		*ts = timeState{updates: ts.updates[:0]}
		r.free = append(r.free, ts)
	}
	r.times.del(t)
}

// Resume returns an empty receiver at a frontier saved earlier, done
// included, as the durable processor needs after a restart.
func Resume(frontier uint64, done bool) *Receiver {
	r := &Receiver{frontier: frontier, done: done, seq: 1}
	r.times.base = frontier
	return r
}

// SetStats replaces the receiver's counters, so that counts carried in a
// checkpoint survive a restart.
func (r *Receiver) SetStats(s Stats) { r.stats = s }
