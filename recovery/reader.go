package recovery

import (
	"fmt"
	"maps"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/store"
	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// Reader is a read-only view of a database, for inspection and offline
// replay (the stored output, Records; or the output derived anew from
// the WAL, Rederive). It holds a shared lock and never writes: while a
// Processor holds the database, OpenReader fails with ErrLocked after the
// lock timeout.
type Reader struct {
	db *store.DB
	cp checkpoint
	l  layout
	// recv is the receiver as rebuilt at an open (what it holds in
	// memory), all the one holding every pending message.
	recv, all *demangle.Receiver
	// release ends a Processor.Reader's use of its processor's database,
	// which Close then leaves open.
	release func()
}

// OpenReader opens the database at path read-only.
func OpenReader(path string, lockTimeout time.Duration) (*Reader, error) {
	db, err := store.Open(path, store.Options{ReadOnly: true, LockTimeout: lockTimeout})
	if err != nil {
		return nil, err
	}
	r := &Reader{db: db}
	err = db.View(func(tx *bolt.Tx) error {
		cp, ok, err := loadCheckpoint(tx)
		if err != nil {
			return err
		}
		if !ok {
			cp = newCheckpoint(0)
		}
		r.cp = cp
		if r.l, err = readLayout(tx); err != nil {
			return err
		}
		return crossCheck(tx, &cp, ok)
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return r, nil
}

// Close releases the database (a Processor.Reader leaves it open).
func (r *Reader) Close() error {
	if r.release != nil {
		r.release()
		r.release = nil
		return nil
	}
	return r.db.Close()
}

// Reader returns a read-only view of the processor's database as of its
// last commit, for a process that asks about the database while this one
// holds it (package control answers inspect this way). Each of its scans
// is one read transaction beside the commits; a long one can delay a
// commit that must grow the file. Close it when done: Close of the
// processor waits for it.
func (p *Processor) Reader() (*Reader, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	r := &Reader{db: p.db, release: p.leave}
	err := p.db.View(func(tx *bolt.Tx) error {
		cp, ok, err := loadCheckpoint(tx)
		if !ok && err == nil {
			cp = newCheckpoint(p.opts.Start)
		}
		r.cp = cp
		if err == nil {
			r.l, err = readLayout(tx)
		}
		return err
	})
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("read %s: %w", p.db.Path(), err)
	}
	return r, nil
}

// receiver rebuilds the receiver as an open does, once: with all, with
// every pending message in memory.
func (r *Reader) receiver(all bool) (*demangle.Receiver, error) {
	p := &r.recv
	if all {
		p = &r.all
	}
	if *p == nil {
		recv, _, err := rebuild(r.db, &r.l, &r.cp, 0, all)
		if err != nil {
			return nil, err
		}
		*p = recv
	}
	return *p, nil
}

// Status returns the state as of the last commit. It rebuilds the part of
// the pending state an open holds in memory, to say why the frontier is
// stuck: about as much work as an open.
func (r *Reader) Status() (Status, error) {
	recv, err := r.receiver(false)
	if err != nil {
		return Status{}, err
	}
	return buildStatus(r.db, &r.cp, captureReceiver(recv), nil)
}

// Pending lists each pending time: its expected count, if known, and the
// distinct updates held. It reads every pending message into memory (the
// WAL from the frontier on), however many there are: ScanPending lists
// the same in bounded memory.
func (r *Reader) Pending() ([]demangle.PendingTime, error) {
	recv, err := r.receiver(true)
	if err != nil {
		return nil, err
	}
	return recv.Pending(), nil
}

// ScanPending calls fn on each pending time, in time order, as Pending
// lists them, until fn returns an error, which it returns. It holds the
// pending state in memory a window of times at a time (within the default
// PendingMemory, as an open does), reading each window from the WAL, so
// its memory does not grow with what is pending: what `cdclog inspect
// pending` shows.
func (r *Reader) ScanPending(fn func(*demangle.PendingTime) error) error {
	recv, _, err := rebuild(r.db, &r.l, &r.cp, 0, false)
	if err != nil {
		return err
	}
	return recv.ScanPending(fn)
}

// OutputEnd returns the sequence number after the last committed record.
func (r *Reader) OutputEnd() uint64 { return r.cp.NextOutput }

// OutputStart returns the first record the output log holds: 1, unless
// gc's retention dropped the records before it.
func (r *Reader) OutputStart() uint64 { return r.cp.outputFrom() }

// Records calls fn for each committed output record from seq from on, in
// order, until fn returns an error. Record data is only valid during fn.
// From below OutputStart() is an *OutputDroppedError.
func (r *Reader) Records(from uint64, fn func(*Record) error) error {
	var rec Record
	return r.db.View(func(tx *bolt.Tx) error {
		return scanOutput(tx, max(from, 1), func(seq uint64, m *cdc.Message) (bool, error) {
			rec.Seq, rec.Msg = seq, *m
			return true, fn(&rec)
		})
	})
}

// WALEntry is one logged message, as shown by inspect wal.
type WALEntry struct {
	Time    uint64
	Arrival uint64
	Pos     cdc.Pos
	Msg     cdc.Message
}

// WAL calls fn for each logged message whose filing time lies in
// [from, to], in key order (by time), until fn returns an error. Entry
// data is only valid during fn.
func (r *Reader) WAL(from, to uint64, fn func(*WALEntry) error) error {
	var we WALEntry
	return r.db.View(func(tx *bolt.Tx) error {
		l, err := readLayout(tx)
		if err != nil {
			return err
		}
		return l.wal.Scan(tx, from, func(e *wal.Entry) error {
			if e.Time > to {
				return nil
			}
			if _, err := cdc.ParseBinary(e.Body, &we.Msg); err != nil {
				return fmt.Errorf("%w: WAL entry %d: %v", ErrCorrupt, e.Arrival, err)
			}
			we.Time, we.Arrival = e.Time, e.Arrival
			we.Pos = cdc.Pos{Source: r.cp.sourceName(e.Source), Line: int64(e.Line), Offset: int64(e.Offset)}
			return fn(&we)
		})
	})
}

// Quarantine calls fn for each quarantined message, oldest first.
func (r *Reader) Quarantine(fn func(*QuarantineRecord) error) error {
	return r.db.View(func(tx *bolt.Tx) error { return scanQuarantine(tx, fn) })
}

// Frontier returns the database's committed frontier, as Processor.Frontier.
func (r *Reader) Frontier() (t uint64, complete bool) { return r.cp.Frontier, r.cp.Done }

// WALFloor returns the frontier at the last gc: the WAL no longer holds
// every message below it, so Rederive and Verify cover only the output from
// there on. It is 0 when gc never dropped anything.
func (r *Reader) WALFloor() uint64 { return r.cp.WALFloor }

// Cursors returns every producer cursor of the last commit, by name (see
// Request.Cursor): input positions such as a file's offset or a broker
// source's partitions, and what other producers recorded (a broker sink's
// acknowledged record). The values are the producers' own encodings; the
// map is a copy.
func (r *Reader) Cursors() map[string][]byte {
	return maps.Clone(r.cp.Cursors)
}
