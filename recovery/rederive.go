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
// (at the start frontier, or at the floor left by gc) is fed every logged
// message in the order it was accepted, and fn gets each output message.
// Since the output depends only on that order, the result equals the
// stored output when the WAL is whole. After gc it covers only times from
// the WAL floor on.
func (r *Reader) Rederive(fn func(*cdc.Message) error) error {
	start, err := r.startFrontier()
	if err != nil {
		return err
	}
	return r.db.View(func(tx *bolt.Tx) error { return r.rederive(tx, start, fn) })
}

func (r *Reader) rederive(tx *bolt.Tx, start uint64, fn func(*cdc.Message) error) error {
	recv := demangle.New(start)
	var out []cdc.Message
	var m cdc.Message
	return wal.ScanArrival(tx, func(e *wal.Entry) error {
		if _, err := cdc.ParseBinary(e.Body, &m); err != nil {
			return fmt.Errorf("%w: WAL entry %d: %v", ErrCorrupt, e.Arrival, err)
		}
		at := cdc.Pos{Source: r.cp.sourceName(e.Source), Line: int64(e.Line), Offset: int64(e.Offset)}
		var err error
		if out, _, err = recv.Push(out[:0], &m, at); err != nil {
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

// startFrontier is the frontier the WAL starts from: the gc floor, or the
// frontier the database was created with (the lower bound of the first
// output record's progress, when there is output).
func (r *Reader) startFrontier() (uint64, error) {
	if r.cp.WALFloor > 0 {
		return r.cp.WALFloor, nil
	}
	var start uint64
	found := false
	err := r.Records(1, func(rec *Record) error {
		if rec.Msg.Kind == cdc.KindProgress {
			start, found = rec.Msg.Progress.Lower, true
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return 0, err
	}
	if !found {
		// No output yet: nothing was released, so the frontier has not
		// moved since creation.
		start = r.cp.Frontier
	}
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
}

// Verify re-derives the clean stream from the WAL and compares it with the
// stored output, record by record, in one read transaction and constant
// memory.
func (r *Reader) Verify() (VerifyResult, error) {
	start, err := r.startFrontier()
	if err != nil {
		return VerifyResult{}, err
	}
	from := uint64(1)
	if r.cp.WALFloor > 0 {
		from = r.firstRecordFrom(r.cp.WALFloor)
	}
	res := VerifyResult{Match: true}
	err = r.db.View(func(tx *bolt.Tx) error {
		stored := newOutputIter(tx, from)
		var a, b []byte
		err := r.rederive(tx, start, func(m *cdc.Message) error {
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

// firstRecordFrom finds the first stored record released at or after
// frontier f: the one after the progress statement whose upper is f.
func (r *Reader) firstRecordFrom(f uint64) uint64 {
	first := uint64(1)
	r.Records(1, func(rec *Record) error {
		if rec.Msg.Kind == cdc.KindProgress && !rec.Msg.Progress.Unbounded && rec.Msg.Progress.Upper <= f {
			first = rec.Seq + 1
		}
		return nil
	})
	return first
}
