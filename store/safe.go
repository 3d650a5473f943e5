package store

import (
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// View runs fn in a read transaction. bbolt panics when it meets a damaged
// page, or faults reading the memory map at a wild offset; View turns both
// into an error wrapping ErrCorrupt, so a bad file never crashes a command.
func (db *DB) View(fn func(*bolt.Tx) error) (err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return db.DB.View(fn)
}

// Update runs fn in a write transaction and commits it, with the same
// protection as View (bbolt rolls the transaction back on panic).
func (db *DB) Update(fn func(*bolt.Tx) error) (err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return db.DB.Update(fn)
}

// Begin starts a transaction; callers that keep a transaction open across
// calls use it with Guard.
func (db *DB) Begin(writable bool) (tx *bolt.Tx, err error) {
	defer recoverCorrupt(&err)
	return db.DB.Begin(writable)
}

// Guard runs fn, turning a bbolt panic into an error wrapping ErrCorrupt.
func Guard(fn func() error) (err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return fn()
}

func recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v", ErrCorrupt, r)
	}
}
