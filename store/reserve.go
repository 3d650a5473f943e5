package store

import (
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
// meanwhile), and closes the database. Failing to give the space back is
// not an error of Close: everything committed is intact, and the space
// stays reserved only until a later Close succeeds (a full disk, where
// the transaction's own write can fail, is when that happens).
func (db *DB) Close() error {
	if db.ahead.Reserved() {
		_ = db.Update(func(*bolt.Tx) error { return db.ahead.Release() })
	}
	return db.DB.Close()
}
