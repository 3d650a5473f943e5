package recovery

import (
	"errors"
	"fmt"
	"math"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// recoverState loads the checkpoint (a new one at start in a new database)
// and rebuilds the receiver as it was at that commit (see rebuild).
//
// A database written before the current schema is upgraded first (see
// upgrade). In an existing database, a start that differs from the
// database's is a *StartError (see adoptStart; o.StartSet makes a zero
// o.Start count).
func recoverState(db *store.DB, o Options) (checkpoint, *demangle.Receiver, *walStore, error) {
	if err := upgrade(db, o.Logger); err != nil {
		return checkpoint{}, nil, nil, err
	}
	var cp checkpoint
	var l layout
	err := db.View(func(tx *bolt.Tx) error {
		c, ok, err := loadCheckpoint(tx)
		if err != nil {
			return err
		}
		if !ok {
			c = newCheckpoint(o.Start)
		}
		if err := crossCheck(tx, &c, ok); err != nil {
			return err
		}
		if err := adoptStart(tx, &c, o.Start, o.StartSet); err != nil {
			return err
		}
		cp = c
		l, err = readLayout(tx)
		return err
	})
	if err != nil {
		return cp, nil, nil, err
	}
	recv, st, err := rebuild(db, &l, &cp, o.PendingMemory, false)
	return cp, recv, st, err
}

// rebuild makes the receiver of checkpoint cp, with its store, without
// reading the pending WAL into memory: the checkpoint holds the frontier,
// the counters and the horizon, the WAL the messages; the receiver loads
// back what it held in memory, the WAL's entries from the frontier to the
// horizon (all of them when it had none), in the order they were
// accepted, as judged then (demangle.Receiver.Restore). With all set,
// everything pending is loaded, the horizon ignored (inspect pending).
//
// Every accepted message at or above the frontier is in the WAL, and what
// the receiver holds about a time depends only on the messages about it in
// the order they were accepted, so the rebuilt receiver is the one that
// committed; a receiver that releases anything means the two disagree.
func rebuild(db *store.DB, l *layout, cp *checkpoint, budget int64, all bool) (*demangle.Receiver, *walStore, error) {
	st := newWALStore(db, l, cp.sourceName)
	recv := demangle.Resume(cp.Frontier, cp.Done)
	if all {
		budget = math.MaxInt64
	}
	recv.UseStore(st, budget)
	err := db.View(func(tx *bolt.Tx) error { return st.rescan(tx, cp.Frontier) })
	if err == nil {
		h := cp.horizon()
		h.Spilled = h.Spilled && !all
		err = recv.Restore(h)
	}
	switch {
	case errors.Is(err, demangle.ErrStore):
		return nil, nil, fmt.Errorf("rebuilding the pending state: %w", err)
	case err != nil:
		return nil, nil, fmt.Errorf("%w: rebuilding the pending state: %w", ErrInconsistent, err)
	}
	recv.Deferred() // found and reported before the checkpoint
	recv.SetStats(cp.Stats)
	return recv, st, nil
}

// StartError is Open's refusal of an Options.Start that differs from the
// start the database was created with: the start of a database is fixed
// when it is created (times below it count as complete and are never
// emitted), so another one would be silently ignored. It wraps
// ErrStartMismatch.
type StartError struct {
	// Start is the database's start; Requested is Options.Start.
	Start, Requested uint64
}

func (e *StartError) Error() string {
	return fmt.Sprintf("the database was created with start %d, not %d: an existing database keeps its start (leave the start out to go on with it, or use a new database)",
		e.Start, e.Requested)
}

// Unwrap makes a StartError match ErrStartMismatch.
func (e *StartError) Unwrap() error { return ErrStartMismatch }

// adoptStart checks the requested start against the database's, and
// records the database's in the checkpoint when it was not yet (a
// database from before the start was recorded: see databaseStart). A
// requested start of 0 is checked only when set says that it was given.
func adoptStart(tx *bolt.Tx, cp *checkpoint, requested uint64, set bool) error {
	start, err := databaseStart(tx, cp)
	if err != nil {
		return err
	}
	cp.Start, cp.StartKnown = start, true
	if (requested != 0 || set) && requested != start {
		return &StartError{Start: start, Requested: requested}
	}
	return nil
}

// databaseStart returns the start the database was created with. A
// checkpoint written before it was recorded does not hold it, but the logs
// do: the frontier stays at the start until its first step, which emits a
// progress statement whose lower bound is the start, and its first
// progress record holds it. (gc's retention drops the output log's first
// records, but records the start in the checkpoint first, so a database
// whose log was cut always has StartKnown.)
func databaseStart(tx *bolt.Tx, cp *checkpoint) (uint64, error) {
	if cp.StartKnown {
		return cp.Start, nil
	}
	if cp.NextOutput == 1 {
		return cp.Frontier, nil // nothing emitted: the frontier has not moved
	}
	start, found := uint64(0), false
	err := scanOutput(tx, 1, func(_ uint64, m *cdc.Message) (bool, error) {
		if m.Kind != cdc.KindProgress {
			return true, nil
		}
		start, found = m.Progress.Lower, true
		return false, nil
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, corruptRecord(store.BucketOutput, nil, "output records but no progress record")
	}
	return start, nil
}
