package recovery

import (
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

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
