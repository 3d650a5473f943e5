package recovery

import (
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/store"
	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// recoverState loads the checkpoint (a new one at start in a new database)
// and rebuilds the receiver by replaying the WAL from the checkpointed
// frontier. Every accepted message at or above the frontier is in the WAL
// and the state depends only on that set, so the rebuilt receiver is the
// one that committed; replay releasing anything means the two disagree.
func recoverState(db *store.DB, start uint64) (checkpoint, *demangle.Receiver, error) {
	var cp checkpoint
	var recv *demangle.Receiver
	err := db.View(func(tx *bolt.Tx) error {
		c, ok, err := loadCheckpoint(tx)
		if err != nil {
			return err
		}
		if !ok {
			c = newCheckpoint(start)
		}
		cp = c
		recv, err = replayWAL(tx, &cp)
		return err
	})
	if err != nil {
		return cp, nil, err
	}
	return cp, recv, nil
}

func replayWAL(tx *bolt.Tx, cp *checkpoint) (*demangle.Receiver, error) {
	recv := demangle.Resume(cp.Frontier, cp.Done)
	var out []cdc.Message
	var m cdc.Message
	err := wal.Scan(tx, cp.Frontier, func(e *wal.Entry) error {
		if _, err := cdc.ParseBinary(e.Body, &m); err != nil {
			return fmt.Errorf("%w: WAL entry %d: %v", ErrCorrupt, e.Arrival, err)
		}
		at := cdc.Pos{Source: cp.sourceName(e.Source), Line: int64(e.Line), Offset: int64(e.Offset)}
		var err error
		if out, _, err = recv.Push(out, &m, at); err != nil {
			return fmt.Errorf("%w: replaying WAL entry %d: %v", ErrInconsistent, e.Arrival, err)
		}
		if len(out) > 0 {
			return fmt.Errorf("%w: replaying WAL entry %d released output past the checkpoint", ErrInconsistent, e.Arrival)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	recv.SetStats(cp.Stats)
	return recv, nil
}
