package recovery

import (
	"errors"
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
//
// A database written before checksums is upgraded first (see upgrade). In
// an existing database, a start that differs from the database's is a
// *StartError (see adoptStart; o.StartSet makes a zero o.Start count).
func recoverState(db *store.DB, o Options) (checkpoint, *demangle.Receiver, error) {
	if err := upgrade(db, o.Logger); err != nil {
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
			c = newCheckpoint(o.Start)
		}
		if err := crossCheck(tx, &c, ok); err != nil {
			return err
		}
		if err := adoptStart(tx, &c, o.Start, o.StartSet); err != nil {
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
// batches; it returns errStop when stop closes first.
func decodeWAL(tx *bolt.Tx, cp *checkpoint, batches chan<- []replayed, stop <-chan struct{}) error {
	batch := make([]replayed, 0, replayBatch)
	send := func() error {
		select {
		case batches <- batch:
			batch = make([]replayed, 0, replayBatch)
			return nil
		case <-stop:
			return errStop
		}
	}
	l, err := readLayout(tx)
	if err != nil {
		return err
	}
	err = l.wal.Scan(tx, cp.Frontier, func(e *wal.Entry) error {
		r := replayed{arrival: e.Arrival,
			at: cdc.Pos{Source: cp.sourceName(e.Source), Line: int64(e.Line), Offset: int64(e.Offset)}}
		if _, err := cdc.ParseBinary(e.Body, &r.m); err != nil {
			return fmt.Errorf("%w: WAL entry %d: %v", ErrCorrupt, e.Arrival, err)
		}
		batch = append(batch, r)
		if len(batch) == replayBatch {
			return send()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = send()
	}
	return err
}

// pushReplayed pushes the decoded entries; none may be refused or release
// output, since the checkpoint was written with all of them pushed.
func pushReplayed(recv *demangle.Receiver, batches <-chan []replayed) error {
	var out []cdc.Message
	for batch := range batches {
		for i := range batch {
			r := &batch[i]
			var err error
			if out, _, err = recv.Push(out, &r.m, r.at); err != nil {
				return fmt.Errorf("%w: replaying WAL entry %d: %v", ErrInconsistent, r.arrival, err)
			}
			if len(out) > 0 {
				return fmt.Errorf("%w: replaying WAL entry %d released output past the checkpoint", ErrInconsistent, r.arrival)
			}
		}
	}
	return nil
}
