package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/cdclog/cdclog/internal/prealloc"
	"io/fs"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout version this build writes. It reads every
// version from OldestSchema on (see the package documentation).
const SchemaVersion = 2

// magic marks a bbolt file as cdclog's.
const magic = "cdclog"

// Bucket names.
var (
	BucketMeta       = []byte("meta")
	BucketWAL        = []byte("wal")
	BucketWALSeq     = []byte("walseq")
	BucketCheckpoint = []byte("checkpoint")
	BucketOutput     = []byte("output")
	BucketQuarantine = []byte("quarantine")
	BucketConsumers  = []byte("consumers")
)

func allBuckets() [][]byte {
	return [][]byte{BucketMeta, BucketWAL, BucketWALSeq, BucketCheckpoint, BucketOutput, BucketQuarantine, BucketConsumers}
}

// DefaultLockTimeout is how long Open waits for another process's lock.
const DefaultLockTimeout = 3 * time.Second

// Options tune Open. The zero value opens read-write, creating the file,
// with DefaultLockTimeout.
type Options struct {
	// ReadOnly opens with a shared lock and never writes; the file must
	// exist.
	ReadOnly bool
	// LockTimeout bounds the wait for another process's lock.
	LockTimeout time.Duration
	// NoSync skips fsync on commit. Only for throwaway databases (tests,
	// benchmarks of the in-memory path): a crash can lose committed data.
	NoSync bool
}

// DB is an open cdclog database.
type DB struct {
	*bolt.DB
	path     string
	readOnly bool
	ahead    *prealloc.Ahead // nil when read-only
}

// Path returns the file the database was opened from.
func (db *DB) Path() string { return db.path }

// ReadOnly reports whether the database was opened read-only.
func (db *DB) ReadOnly() bool { return db.readOnly }

// boltOptions are the bbolt options, each chosen on purpose:
//   - FreelistMapType: the hashmap freelist allocates in O(1) where the
//     array one scans, which matters once gc has freed many pages;
//   - the freelist is written with every commit (NoFreelistSync off): it
//     costs a page or two per group commit, measured within noise, whereas
//     without it bbolt rebuilds the freelist on open by walking every page
//     of the file, on a goroutine of its own where a damaged page is a
//     panic no caller can recover (the process dies instead of reporting a
//     corrupt database), and touching the whole file on every open;
//   - PreLoadFreelist: a read-only open too reads the freelist at once,
//     where openBolt recovers from a damaged one, rather than in the
//     goroutine of bbolt's Tx.Check ('cdclog check'), where nothing can;
//   - InitialMmapSize 1 GiB: the WAL grows steadily, and every remap takes
//     the mmap lock and blocks readers; reserving address space (not
//     memory) up front avoids remaps during ingest;
//   - Timeout: a second process gets ErrLocked instead of hanging.
func boltOptions(o Options) *bolt.Options {
	t := o.LockTimeout
	if t <= 0 {
		t = DefaultLockTimeout
	}
	return &bolt.Options{
		Timeout:         t,
		ReadOnly:        o.ReadOnly,
		NoSync:          o.NoSync,
		FreelistType:    bolt.FreelistMapType,
		NoFreelistSync:  false,
		PreLoadFreelist: true,
		InitialMmapSize: 1 << 30,
	}
}

// Open opens or creates the cdclog database at path.
func Open(path string, o Options) (*DB, error) {
	if o.ReadOnly {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open %s: %w", path, ErrNotExist)
		}
	}
	for attempt := 0; ; attempt++ {
		before, _ := os.Stat(path)
		bdb, file, err := openBolt(path, boltOptions(o))
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, classify(err))
		}
		// gc replaces the file by rename while it holds the lock; a lock
		// won on the old inode is a lock on a file nobody will read again,
		// so open the new one.
		if attempt < 5 && replaced(path, before) {
			bdb.Close()
			continue
		}
		db := &DB{DB: bdb, path: path, readOnly: o.ReadOnly}
		if !o.ReadOnly {
			db.ahead = prealloc.New(file)
		}
		if err := db.checkSchema(); err != nil {
			bdb.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		return db, nil
	}
}

// openBolt opens the bbolt file. Opened for writing, bbolt walks every
// page of the database to rebuild its free list (NoFreelistSync), and it
// panics on a damaged page, or faults on a wild offset; openBolt turns both
// into an error wrapping ErrCorrupt, and unlocks and closes the file bbolt
// had opened (the memory map it made is left behind). Damage
// that bbolt's walk reports from a goroutine of its own (a key out of
// order, a page referenced twice) still aborts the process: nothing here
// can catch it.
//
// It also returns the file bbolt opened, for Reserve.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, file *os.File, err error) {
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	defer func() {
		if r := recover(); r != nil {
			if file != nil {
				unlock(file) // the memory map keeps the file open
				file.Close()
			}
			db, file, err = nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, err = bolt.Open(path, 0o600, o)
	return db, file, err
}

// replaced reports whether path names another file than before did.
func replaced(path string, before os.FileInfo) bool {
	if before == nil {
		return false
	}
	after, err := os.Stat(path)
	return err != nil || !os.SameFile(before, after)
}

// classify maps bbolt's open errors to this package's.
func classify(err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return ErrLocked
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch):
		return fmt.Errorf("%w (not a bbolt file: %v)", ErrForeign, err)
	case errors.Is(err, berrors.ErrChecksum):
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return err
}

// checkSchema verifies the meta bucket, creating it in a new, empty
// database. It never writes to a database that has other content.
func (db *DB) checkSchema() error {
	var fresh bool
	err := db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(BucketMeta)
		if meta == nil {
			empty := true
			tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
			if !empty {
				return fmt.Errorf("%w: a bbolt database without cdclog's meta bucket", ErrForeign)
			}
			fresh = true
			return nil
		}
		return checkMeta(meta)
	})
	if err != nil || !fresh {
		return err
	}
	if db.readOnly {
		return fmt.Errorf("%w: the file is an empty bbolt database", ErrForeign)
	}
	return db.Update(func(tx *bolt.Tx) error { return create(tx) })
}

func checkMeta(meta *bolt.Bucket) error {
	if string(meta.Get([]byte("magic"))) != magic {
		return fmt.Errorf("%w: the meta bucket has no cdclog mark", ErrForeign)
	}
	v := meta.Get([]byte("schema"))
	if len(v) != 8 {
		return fmt.Errorf("%w: malformed schema version", ErrCorrupt)
	}
	n := binary.BigEndian.Uint64(v)
	if n > SchemaVersion {
		return fmt.Errorf("%w: version %d, this build reads up to %d", ErrNewerSchema, n, SchemaVersion)
	}
	if n < OldestSchema {
		return fmt.Errorf("%w: schema version %d (versions start at %d)", ErrCorrupt, n, OldestSchema)
	}
	return nil
}

func create(tx *bolt.Tx) error {
	for _, name := range allBuckets() {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	meta := tx.Bucket(BucketMeta)
	if err := meta.Put([]byte("magic"), []byte(magic)); err != nil {
		return err
	}
	if err := meta.Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, SchemaVersion)); err != nil {
		return err
	}
	return meta.Put([]byte("created"), []byte(time.Now().UTC().Format(time.RFC3339)))
}

// Created returns the database's creation time as recorded in meta.
func Created(tx *bolt.Tx) string {
	if meta := tx.Bucket(BucketMeta); meta != nil {
		return string(meta.Get([]byte("created")))
	}
	return ""
}

// Schema returns the schema version recorded in meta.
func Schema(tx *bolt.Tx) uint64 {
	if meta := tx.Bucket(BucketMeta); meta != nil {
		if v := meta.Get([]byte("schema")); len(v) == 8 {
			return binary.BigEndian.Uint64(v)
		}
	}
	return 0
}
