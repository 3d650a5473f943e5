package recovery

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"

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
//
// A database written before checksums is upgraded first (see upgrade).
func recoverState(db *store.DB, start uint64, log *slog.Logger) (checkpoint, *demangle.Receiver, error) {
	if err := upgrade(db, log); err != nil {
		return checkpoint{}, nil, err
	}
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
		if err := crossCheck(tx, &c, ok); err != nil {
			return err
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
	// Decoding runs on a goroutine of its own while this one pushes, so
	// recovery uses both cores. Decoded data aliases the database's memory,
	// valid while tx is open, which it is until both are done.
	batches := make(chan []replayed, 4)
	stop := make(chan struct{})
	scanErr := make(chan error, 1)
	go func() {
		defer close(batches)
		// bbolt panics on a damaged page; on this goroutine the guard
		// around the read transaction would not see it.
		scanErr <- store.Guard(func() error { return decodeWAL(tx, cp, batches, stop) })
	}()
	err := pushReplayed(recv, batches)
	close(stop)
	for range batches { // let the decoder finish before tx closes
	}
	if serr := <-scanErr; err == nil && !errors.Is(serr, errStop) {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	recv.SetStats(cp.Stats)
	return recv, nil
}

// replayed is one decoded WAL entry.
type replayed struct {
	m       cdc.Message
	at      cdc.Pos
	arrival uint64
}

const replayBatch = 1024

// decodeWAL sends the WAL entries from the checkpointed frontier on, in
// batches, in the order they were accepted: when two contradict each
// other (a statement whose claims were held in part), the first one wins.
// It returns errStop when stop closes first.
func decodeWAL(tx *bolt.Tx, cp *checkpoint, batches chan<- []replayed, stop <-chan struct{}) error {
	l, err := readLayout(tx)
	if err != nil {
		return err
	}
	var all []replayed
	err = l.wal.Scan(tx, cp.Frontier, func(e *wal.Entry) error {
		r := replayed{arrival: e.Arrival,
			at: cdc.Pos{Source: cp.sourceName(e.Source), Line: int64(e.Line), Offset: int64(e.Offset)}}
		if _, err := cdc.ParseBinary(e.Body, &r.m); err != nil {
			return fmt.Errorf("%w: WAL entry %d: %v", ErrCorrupt, e.Arrival, err)
		}
		all = append(all, r)
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(a, b replayed) int { return cmp.Compare(a.arrival, b.arrival) })
	for len(all) > 0 {
		n := min(len(all), replayBatch)
		select {
		case batches <- all[:n:n]:
			all = all[n:]
		case <-stop:
			return errStop
		}
	}
	return nil
}

// pushReplayed pushes the decoded entries; none may be refused or release
// output, since the checkpoint was written with all of them pushed (a
// statement some of whose claims were rejected, and reported, when it
// arrived has them rejected again: it was accepted for its others).
func pushReplayed(recv *demangle.Receiver, batches <-chan []replayed) error {
	var out []cdc.Message
	for batch := range batches {
		for i := range batch {
			r := &batch[i]
			var o demangle.Outcome
			var err error
			if out, o, err = recv.Push(out, &r.m, r.at); err != nil && o != demangle.Accepted {
				return fmt.Errorf("%w: replaying WAL entry %d: %v", ErrInconsistent, r.arrival, err)
			}
			if len(out) > 0 {
				return fmt.Errorf("%w: replaying WAL entry %d released output past the checkpoint", ErrInconsistent, r.arrival)
			}
		}
	}
	return nil
}
