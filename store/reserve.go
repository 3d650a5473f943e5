package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Reserve keeps disk space reserved past the end of the database file (see
// package prealloc): bbolt grows the file by truncating it longer, and each
// commit's fsync then allocated the blocks it had written, which cost more
// system time than the writes. Call it from inside a write transaction
// (the fn of Update), where bbolt cannot be growing the file. It is best
// effort, and does nothing on a read-only database.
func (db *DB) Reserve() {
	if db.ahead == nil {
		return
	}
	if fi, err := db.ahead.Stat(); err == nil {
		db.ahead.Ensure(fi.Size())
	}
}

// Close gives back the space Reserve reserved past the end of the file, if
// it reserved any (in a write transaction, so that nothing grows the file
// meanwhile), and closes the database.
func (db *DB) Close() error {
	var rerr error
	if db.ahead.Reserved() {
		rerr = db.Update(func(*bolt.Tx) error { return db.ahead.Release() })
	}
	if err := db.DB.Close(); err != nil {
		return err
	}
	if rerr != nil {
		return fmt.Errorf("close %s: release reserved space: %w", db.path, rerr)
	}
	return nil
}
