package store

import (
	"fmt"
	"runtime"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// View runs fn in a read transaction. bbolt panics when it meets a damaged
// page, or faults reading the memory map at a wild offset; View turns both
// into an error wrapping ErrCorrupt, so a bad file never crashes a command.
func (db *DB) View(fn func(*bolt.Tx) error) error {
	if err := db.unusable(); err != nil {
		return err
	}
	var tx *bolt.Tx
	recovered, err := protect(func() error {
		return db.DB.View(func(t *bolt.Tx) error { tx = t; return fn(t) })
	})
	if recovered {
		err = db.afterFault(tx, err)
	}
	return err
}

// Update runs fn in a write transaction and commits it, with the same
// protection as View (bbolt rolls the transaction back on panic). It
// refuses to run once the file was replaced (see Replace).
func (db *DB) Update(fn func(*bolt.Tx) error) error {
	if err := db.unusable(); err != nil {
		return err
	}
	if db.replaced.Load() {
		return ErrReplaced
	}
	// A file cut short since the last commit is refused before bbolt
	// writes to it: its writes past the cut would fill the hole with the
	// pages it writes and zeros, and the cut would show only later, as a
	// damaged page, if at all (one fstat a commit).
	if err := db.explainFault(nil, db.hwm.Load()); err != nil {
		db.stuck.CompareAndSwap(nil, &err) // unusable, as after a fault
		return err
	}
	var tx *bolt.Tx
	var hwm int64
	recovered, err := protect(func() error {
		return db.DB.Update(func(t *bolt.Tx) error {
			tx, hwm = t, t.Size()
			db.hwm.Store(hwm)
			db.setGrowth(hwm)
			return fn(t)
		})
	})
	switch {
	case recovered:
		err = db.afterFault(tx, db.explainFault(err, hwm))
	case err != nil:
		err = db.explainFault(err, hwm)
	}
	return err
}

// Begin starts a transaction; callers that keep a transaction open across
// calls use it with Guard.
func (db *DB) Begin(writable bool) (*bolt.Tx, error) {
	if err := db.unusable(); err != nil {
		return nil, err
	}
	var tx *bolt.Tx
	recovered, err := protect(func() (err error) {
		tx, err = db.DB.Begin(writable)
		return err
	})
	if recovered {
		return nil, db.afterFault(nil, err)
	}
	return tx, err
}

// Guard runs fn, turning a bbolt panic into an error wrapping ErrCorrupt.
// fn runs inside a transaction its caller owns, which the caller rolls
// back.
func Guard(fn func() error) error {
	_, err := protect(fn)
	return err
}

// protect runs fn with memory faults turned into panics, and turns a
// panic into an error wrapping ErrCorrupt; recovered says whether it did.
func protect(fn func() error) (recovered bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			recovered, err = true, panicError(r)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return false, fn()
}

// panicError describes what bbolt's panic, or a memory fault, means.
func panicError(r any) error {
	if re, ok := r.(runtime.Error); ok {
		if f, ok := re.(interface{ Addr() uintptr }); ok {
			return fmt.Errorf("%w: a memory fault reading the database file at address %#x (damaged pages, an I/O error, or the file cut short while open)", ErrCorrupt, f.Addr())
		}
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, r)
}

// explainFault says so, instead of err, when the file is shorter than the
// high-water mark hwm: it was cut while this process had it open.
func (db *DB) explainFault(err error, hwm int64) error {
	if db.file == nil || hwm == 0 {
		return err
	}
	if fi, serr := db.file.Stat(); serr == nil && fi.Size() < hwm {
		return fmt.Errorf("%w: the file was cut to %d bytes while open, and its last commit uses %d", ErrCorrupt, fi.Size(), hwm)
	}
	return err
}

// afterFault records that the database is unusable when the panic left
// bbolt's locks held: a panic before the transaction began (bbolt takes
// its locks first), or one that its rollback did not survive (rolling
// back a write transaction reads the free list from the memory map,
// which faults again when the file is gone; the writer lock then stays
// held, and bbolt's Close would wait for it forever).
func (db *DB) afterFault(tx *bolt.Tx, err error) error {
	if tx != nil && tx.DB() == nil {
		return err // rolled back: bbolt is consistent
	}
	db.stuck.CompareAndSwap(nil, &err)
	return err
}

// unusable returns the fault that left the database unusable, if one did.
func (db *DB) unusable() error {
	if p := db.stuck.Load(); p != nil {
		return fmt.Errorf("database unusable after an earlier fault: %w", *p)
	}
	return nil
}
