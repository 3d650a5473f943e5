package recovery

import (
	"errors"
	"fmt"
	"math"

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
