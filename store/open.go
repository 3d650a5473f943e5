package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"time"

	"github.com/cdclog/cdclog/internal/prealloc"
	bolt "go.etcd.io/bbolt"
)

// Why one attempt of Open did not open the database; both are retried.
var (
	// errBusy: another process holds the lock.
	errBusy = errors.New("busy")
	// errAgain: the file at the path changed (another process created or
	// replaced it, or this one did); look again at once.
	errAgain = errors.New("again")
)

// maxPoll bounds the sleep between attempts at a lock another process
// holds; the sleep starts at a millisecond and doubles.
const maxPoll = 20 * time.Millisecond

// maxAgain bounds the attempts that find the file changed: each means a
// process created or replaced the file, which it does holding the lock,
// so a waiting opener sees errBusy between them and the lock timeout
// ends the wait; the bound only keeps a pathological loop finite.
const maxAgain = 1000

// open tries until it holds the lock on the file at path, or the lock
// timeout passes.
func open(path string, o *Options) (*DB, error) {
	real, err := resolve(path)
	if err != nil {
		return nil, err
	}
	wait := o.LockTimeout
	switch {
	case wait == 0:
		wait = DefaultLockTimeout
	case wait < 0:
		wait = 0
	}
	start, poll := time.Now(), time.Millisecond
	for again := 0; ; {
		db, err := attempt(path, real, o, wait-time.Since(start))
		switch {
		case err == nil:
			return db, nil
		case errors.Is(err, errAgain) && again < maxAgain:
			again++
			continue
		case !errors.Is(err, errBusy) && !errors.Is(err, errAgain):
			return nil, err
		}
		waited := time.Since(start)
		if waited >= wait {
			if wait == 0 {
				return nil, fmt.Errorf("%w (tried once, without waiting)", ErrLocked)
			}
			return nil, fmt.Errorf("%w (gave up after %v)", ErrLocked, waited.Round(time.Millisecond))
		}
		time.Sleep(min(poll, wait-waited))
		poll = min(2*poll, maxPoll)
	}
}

// attempt opens the file at real once: it creates a missing one, and
// locks an existing one without waiting.
func attempt(path, real string, o *Options, left time.Duration) (*DB, error) {
	flag := os.O_RDWR
	if o.ReadOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(real, flag, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if o.ReadOnly || o.NoCreate {
			return nil, ErrNotExist
		}
		if err := createFile(real, o); err != nil {
			return nil, err
		}
		return nil, errAgain
	}
	if err != nil {
		return nil, pathless(err)
	}
	ok, err := tryLock(f, !o.ReadOnly)
	if err != nil || !ok {
		f.Close()
		if err == nil {
			err = errBusy
		}
		return nil, err
	}
	db, err := openLocked(f, path, real, o, left)
	if err != nil && db == nil && f != nil {
		unlock(f)
		f.Close() // a second Close, when bbolt closed it, is harmless
	}
	return db, err
}

// openLocked opens f, which this process has locked, as the database.
func openLocked(f *os.File, path, real string, o *Options, left time.Duration) (*DB, error) {
	// A lock won on a file that another process has since replaced (gc,
	// or an Open that replaced a file with no committed state) is a lock
	// on a file no one will read again.
	if !current(f, real) {
		return nil, errAgain
	}
	st, err := examine(f, os.Getpagesize())
	switch {
	case err != nil:
		return nil, err
	case st.short != nil:
		return nil, st.short
	case st.blank != "" && (o.ReadOnly || o.NoCreate):
		return nil, fmt.Errorf("%w: the file holds no committed cdclog state (%s)", ErrNotExist, st.blank)
	case st.blank == "" && st.noMeta && st.size < 2*int64(os.Getpagesize()):
		// bbolt would take the system's page size and fail to map the
		// file with a bare "file size too small".
		return nil, fmt.Errorf("%w (not a bbolt file: no valid meta page in its %d bytes)", ErrForeign, st.size)
	case st.blank != "":
		o.Logger.Warn("the database file holds no committed state: replacing it with a new database", "db", path, "why", st.blank)
		if _, err := replace(f, real, "new", func(bdb *bolt.DB) error { return bdb.Update(create) }); err != nil {
			return nil, fmt.Errorf("replace the file that holds no committed state: %w", err)
		}
		return nil, errAgain
	}
	bdb, err := openBolt(real, f, boltOptions(o, left))
	if err != nil {
		return nil, classify(err)
	}
	db := &DB{DB: bdb, path: path, real: real, file: f, readOnly: o.ReadOnly}
	if !current(f, real) { // where tryLock does not lock, bbolt locked just now
		bdb.Close()
		return nil, errAgain
	}
	if !o.ReadOnly {
		db.ahead = prealloc.New(f)
	}
	if err := db.checkSchema(o.NoCreate, st.damagedMeta); err != nil {
		db.Close()
		return nil, err
	}
	if !o.ReadOnly {
		removeStale(real)
	}
	return db, nil
}

// current reports whether f is still the file at real.
func current(f *os.File, real string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(real)
	return err == nil && os.SameFile(a, b)
}

// openBolt opens f, the file at path, with bbolt. Opened for writing,
// bbolt reads the free list and the root bucket, and it panics on a
// damaged page, or faults on a wild offset; openBolt turns both into an
// error wrapping ErrCorrupt (the memory map bbolt made is left behind;
// the caller closes f).
func openBolt(path string, f *os.File, o *bolt.Options) (db *bolt.DB, err error) {
	o.OpenFile = func(string, int, os.FileMode) (*os.File, error) { return f, nil }
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, panicError(r)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return bolt.Open(path, 0o600, o)
}

// Replace writes a new database file, which fn fills (for example with
// bolt.Compact from db.DB), and renames it over the database's file while
// db holds that file's lock: so no process writes to the file it
// replaces, and every process that opens the path afterwards, or was
// waiting for the lock, opens the new file. The new file takes the old
// one's mode and, as far as the process may give it, its owner; both its
// meta pages describe all that fn wrote (so one damaged page loses
// nothing); it is synced before the rename, and the directory after. A failure leaves
// the old file in place and removes the new one. After Replace, db's
// file is no longer at the path: Update refuses (ErrReplaced), and db
// should be closed. It returns the new file's size.
func (db *DB) Replace(fn func(dst *bolt.DB) error) (int64, error) {
	if db.readOnly {
		return 0, errors.New("replace the database file: opened read-only")
	}
	if err := db.unusable(); err != nil {
		return 0, err
	}
	if db.replaced.Load() {
		return 0, ErrReplaced
	}
	n, err := replace(db.file, db.real, "replace", fn)
	if err != nil {
		return 0, fmt.Errorf("replace the database file: %w", err)
	}
	db.replaced.Store(true)
	return n, nil
}
