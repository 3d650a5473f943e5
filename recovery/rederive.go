package recovery

import (
	"errors"
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// Rederive recomputes the clean stream from the WAL alone: a fresh receiver
// (at the start frontier) is fed every logged message in the order it was
// accepted, and fn gets each output message. Since the output depends only
// on that order, the result equals the stored output when the WAL is whole.
// After gc it starts at the first step of the frontier at or above the WAL
// floor (see rederiveStart), and equals the stored output from there on.
func (r *Reader) Rederive(fn func(*cdc.Message) error) error {
	start, err := r.rederiveStart()
	if err != nil {
		return err
	}
	return r.db.View(func(tx *bolt.Tx) error { return r.rederive(tx, start, fn) })
}

func (r *Reader) rederive(tx *bolt.Tx, start rederiveStart, fn func(*cdc.Message) error) error {
	if start.done {
		return nil // every time was released before the kept WAL begins
	}
	l, err := readLayout(tx)
	if err != nil {
		return err
	}
	recv := demangle.New(start.frontier)
	var out []cdc.Message
	var m cdc.Message
	return l.wal.ScanArrival(tx, func(e *wal.Entry) error {
		if _, err := cdc.ParseBinary(e.Body, &m); err != nil {
			return fmt.Errorf("%w: WAL entry %d: %v", ErrCorrupt, e.Arrival, err)
		}
		at := cdc.Pos{Source: r.cp.sourceName(e.Source), Line: int64(e.Line), Offset: int64(e.Offset)}
		var err error
		// A violation here is one the processor found and reported: a
		// statement accepted for some of its claims, or a message accepted
		// beyond the memory horizon and dropped when its time was loaded
		// (Deferred). Pushed in the order they were accepted, they are
		// judged as they were, so they are dropped again.
		if out, _, err = recv.Push(out[:0], &m, at); err != nil && !demangle.IsViolation(err) {
			return fmt.Errorf("%w: WAL entry %d: %v", ErrInconsistent, e.Arrival, err)
		}
		for i := range out {
			if err := fn(&out[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// rederiveStart is where a re-derivation starts: the frontier a fresh
// receiver starts at, and the sequence number of the first stored record
// released after the stored receiver's frontier reached it.
type rederiveStart struct {
	frontier uint64
	done     bool // the stored receiver had released every time there
	seq      uint64
}

// rederiveStart finds where to re-derive from. With the whole WAL, that is
// the frontier the database was created with (the lower bound of the first
// output record's progress, or the checkpoint's frontier when nothing was
// released) and record 1.
//
// After gc the WAL holds every message at or above the floor, but the
// floor (frontier - --keep-wal) may fall strictly inside one step of the
// frontier, [lower, upper) released at once: a receiver started at the
// floor then releases [floor, upper) on its own, often earlier and in
// other steps, and its output differs from the stored records though both
// are right (issue 12, item 9). So the start is the first step boundary at
// or above the floor, B: up to the moment the stored receiver's frontier
// reached B, time B was not complete (or the frontier would have gone
// past it), so a fresh receiver at B releases nothing before that moment
// either, and from then on both hold the same messages at or above B and
// release the same records, as a restart from a checkpoint at B would.
//
// A boundary is the upper bound of the last of consecutive progress
// records: a step emits its updates, then its progress (which a split
// statement would make several consecutive records), so the upper bound of
// a progress record followed by an update, or by nothing, is a frontier
// the stored receiver stood at. Consecutive steps without updates make one
// run and count as one boundary: the start may be later than it could be,
// never wrong.
//
// After gc's retention dropped the output before record F, the stored
// records are read from F: with the whole WAL the start is still the
// database's (recorded in the checkpoint before anything was dropped) at
// record 1, and Verify skips the re-derived records before F; after gc of
// the WAL too, the first boundary at or above the floor that the kept
// records show is the start (a later one than could be, never a wrong
// one: a progress record at F may end a run that began before it, whose
// upper bound is still the frontier after it).
func (r *Reader) rederiveStart() (rederiveStart, error) {
	floor := r.cp.WALFloor
	start := rederiveStart{frontier: r.cp.Frontier, done: r.cp.Done, seq: 1}
	first := r.cp.outputFrom()
	if first > 1 && floor == 0 && r.cp.StartKnown {
		return rederiveStart{frontier: r.cp.Start, seq: 1}, nil
	}
	var (
		found bool
		any   = first > 1 // a record before the first kept one was a progress record
		run   bool        // the previous record is a progress record
		prev  cdc.Progress
		// prevSeq is prev's sequence number.
		prevSeq uint64
	)
	// boundary sets start at the end of the run whose last record is
	// prev, if that is at or above the floor.
	boundary := func() bool {
		switch {
		case prev.Unbounded:
			start = rederiveStart{done: true, seq: prevSeq + 1}
		case prev.Upper >= floor:
			start = rederiveStart{frontier: prev.Upper, seq: prevSeq + 1}
		default:
			return false
		}
		return true
	}
	err := r.Records(first, func(rec *Record) error {
		if rec.Msg.Kind == cdc.KindProgress {
			if !any && rec.Msg.Progress.Lower >= floor {
				// The creation frontier is the first boundary.
				start, found = rederiveStart{frontier: rec.Msg.Progress.Lower, seq: 1}, true
				return errStop
			}
			any, run, prev, prevSeq = true, true, rec.Msg.Progress, rec.Seq
			return nil
		}
		if run {
			if found = boundary(); found {
				return errStop
			}
			run = false
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return start, err
	}
	if !found && run {
		found = boundary()
	}
	if !found && any {
		// gc never sets the floor above the frontier, which is the last
		// step's upper bound.
		return start, fmt.Errorf("%w: the WAL floor %d is past the stored output's last step", ErrInconsistent, floor)
	}
	// Without output nothing was released: the frontier has not moved
	// since creation, and start is the checkpoint's.
	return start, nil
}

var errStop = errors.New("stop")

// VerifyResult compares the re-derived stream with the stored output.
type VerifyResult struct {
	// Compared is the number of records compared.
	Compared uint64
	// Match is false when the streams differ; FirstDiff is then the
	// sequence number of the first stored record that differs (or the
	// length plus one when one stream is a prefix of the other), with
	// Stored and Derived the two messages' renderings.
	Match     bool
	FirstDiff uint64
	Stored    string
	Derived   string
	// FromSeq is the first stored record compared: 1, or after gc the
	// first one released once the frontier reached the kept WAL, or the
	// first one the output log holds after gc's retention dropped those
	// before it (see OutputFrom).
	FromSeq uint64
	// OutputFrom is the first record the output log holds (1 unless gc's
	// retention dropped output); the re-derived records before it were
	// not compared.
	OutputFrom uint64
}

// Verify re-derives the clean stream from the WAL and compares it with the
// stored output, record by record, in one read transaction and constant
// memory.
func (r *Reader) Verify() (VerifyResult, error) {
	start, err := r.rederiveStart()
	if err != nil {
		return VerifyResult{}, err
	}
	first := r.cp.outputFrom()
	from := max(start.seq, first)
	res := VerifyResult{Match: true, FromSeq: from, OutputFrom: first}
	err = r.db.View(func(tx *bolt.Tx) error {
		stored, err := newOutputIter(tx, from)
		if err != nil {
			return err
		}
		var a, b []byte
		derived := start.seq // the sequence number of the next re-derived record
		err = r.rederive(tx, start, func(m *cdc.Message) error {
			if derived++; derived <= from {
				return nil // dropped by gc's retention: nothing to compare with
			}
			seq, sm, ok, err := stored.next()
			if err != nil {
				return err
			}
			b = cdc.AppendJSON(b[:0], m)
			if !ok {
				res.Match, res.FirstDiff, res.Derived = false, seq, string(b)
				return errStop
			}
			a = cdc.AppendJSON(a[:0], sm)
			if string(a) != string(b) {
				res.Match, res.FirstDiff, res.Stored, res.Derived = false, seq, string(a), string(b)
				return errStop
			}
			res.Compared++
			return nil
		})
		if err != nil {
			return err
		}
		if seq, sm, ok, err := stored.next(); err != nil {
			return err
		} else if ok {
			res.Match, res.FirstDiff, res.Stored = false, seq, string(cdc.AppendJSON(nil, sm))
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return res, err
	}
	return res, nil
}
