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

	times      map[uint64]*timeState
	peakTimes  int
	countTimes timeHeap
	cover      coverage
	zeroStmts  stmtHeap
	// held is the number of distinct updates held.
	held int

	stats Stats
}

// New returns a receiver whose frontier starts at start: times below it are
// taken as complete and already emitted.
func New(start uint64) *Receiver {
	return &Receiver{frontier: start}
}

// Frontier returns the frontier F and whether the stream is over (every time
// is complete, so F is past cdc.MaxTime and t is meaningless).
func (r *Receiver) Frontier() (t uint64, done bool) {
	return r.frontier, r.done
}

// Push offers one message at position at. It appends whatever the message
// releases (complete times' updates and one progress statement) to out and
// returns it. A rejected message leaves the receiver unchanged and returns
// a *ViolationError, ErrNaive or an error wrapping ErrInvalid.
func (r *Receiver) Push(out []cdc.Message, m *cdc.Message, at cdc.Pos) ([]cdc.Message, Outcome, error) {
	if err := m.Validate(); err != nil {
		return out, 0, fmt.Errorf("%s: %w: %v", at, ErrInvalid, err)
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
	if err != nil {
		r.stats.Violations++
		return out, 0, err
	}
	r.stats.count(m.Kind, o)
	if o == Accepted {
		out = r.advance(out)
	}
	return out, o, nil
}

// state returns the state of time t, creating it when create is set.
func (r *Receiver) state(t uint64, create bool) *timeState {
	ts := r.times[t]
	if ts == nil && create {
		if r.times == nil {
			r.times = make(map[uint64]*timeState)
		}
		ts = &timeState{}
		r.times[t] = ts
		if len(r.times) > r.peakTimes {
			r.peakTimes = len(r.times)
		}
	}
	return ts
}

// forget drops time t's state once it has been emitted. Go maps never give
// memory back, so when the map has shrunk to a quarter of its peak it is
// rebuilt: memory follows what is pending, not what was seen.
func (r *Receiver) forget(t uint64) {
	if ts := r.times[t]; ts != nil {
		r.held -= len(ts.updates)
	}
	delete(r.times, t)
	if r.peakTimes > 4096 && len(r.times) < r.peakTimes/4 {
		m := make(map[uint64]*timeState, len(r.times))
		for k, v := range r.times {
			m[k] = v
		}
		r.times = m
		r.peakTimes = len(m)
	}
}

// Resume returns an empty receiver at a frontier saved earlier, done
// included, as the durable processor needs after a restart.
func Resume(frontier uint64, done bool) *Receiver {
	return &Receiver{frontier: frontier, done: done}
}

// SetStats replaces the receiver's counters, so that counts carried in a
// checkpoint survive a restart.
func (r *Receiver) SetStats(s Stats) { r.stats = s }
