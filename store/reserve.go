package store

import (
	bolt "go.etcd.io/bbolt"
)

// Growth of the file. bbolt grows the file by truncating it longer, by
// DB.AllocSize (16 MiB) past what a commit needs, and Reserve keeps disk
// space reserved past the end (package prealloc). Both are in proportion
// to what the file holds, so that a small stream makes a small file
// (4 messages: 16 MiB before, 96 KiB after) and a large one grows in
// the same 16 MiB steps as before once it holds 16 MiB.
const (
	minGrowth = 64 << 10
	maxGrowth = 16 << 20 // bbolt's DefaultAllocSize
)

// growth is how much bbolt grows a file whose high-water mark is hwm
// bytes: as much again, from 64 KiB up to bbolt's 16 MiB.
func growth(hwm int64) int {
	return int(min(max(hwm, minGrowth), maxGrowth))
}

// setGrowth sets bbolt's growth step for the write transaction that is
// starting; bbolt reads it only in that transaction's commit.
func (db *DB) setGrowth(hwm int64) { db.DB.AllocSize = growth(hwm) }

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
//
// After a fault that left bbolt's locks held (see Update), bbolt's own
// Close would wait for them forever: Close then only closes the file,
// which releases the process's lock on it, leaves bbolt's memory map to
// the end of the process, and returns the fault.
func (db *DB) Close() error {
	if db.ahead.Reserved() && !db.replaced.Load() && db.unusable() == nil {
		_ = db.Update(func(*bolt.Tx) error { return db.ahead.Release() })
	}
	if err := db.unusable(); err != nil {
		unlock(db.file) // the memory map keeps the file open, and locked
		db.file.Close()
		return err
	}
	return db.DB.Close()
}
