package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/cdclog/cdclog/internal/prealloc"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout version this build writes. It reads every
// version from OldestSchema on (see the package documentation).
const SchemaVersion = 3

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
	// BucketOutputTimes marks when output records were committed, for
	// retention by age. Package recovery creates it with the first mark,
	// so a database from before it has none.
	BucketOutputTimes = []byte("outputtimes")
)

func allBuckets() [][]byte {
	return [][]byte{BucketMeta, BucketWAL, BucketWALSeq, BucketCheckpoint, BucketOutput, BucketQuarantine, BucketConsumers}
}

// DefaultLockTimeout is how long Open waits for another process's lock.
const DefaultLockTimeout = 3 * time.Second

// NoWait, as Options.LockTimeout, makes Open try the lock once and not
// wait for it.
const NoWait time.Duration = -1

// Options tune Open. The zero value opens read-write, creating the file,
// with DefaultLockTimeout.
type Options struct {
	// ReadOnly opens with a shared lock and never writes; the file must
	// exist.
	ReadOnly bool
	// NoCreate opens read-write but never creates or replaces the file: a
	// missing file, or one that holds no committed cdclog state, is
	// ErrNotExist, as for ReadOnly.
	NoCreate bool
	// LockTimeout bounds the wait for another process's lock: zero means
	// DefaultLockTimeout, a negative value (NoWait) tries once.
	LockTimeout time.Duration
	// NoSync skips fsync on commit. Only for throwaway databases (tests,
	// benchmarks of the in-memory path): a crash can lose committed data.
	NoSync bool
	// Logger receives a warning when Open replaces a file that holds no
	// committed state; nil means slog.Default().
	Logger *slog.Logger
}

// DB is an open cdclog database.
type DB struct {
	*bolt.DB
	path     string   // as given to Open
	real     string   // path with symbolic links followed
	file     *os.File // the file bbolt uses, locked
	readOnly bool
	ahead    *prealloc.Ahead // nil when read-only

	stuck    atomic.Pointer[error] // a fault left bbolt's locks held
	replaced atomic.Bool           // Replace put another file at the path
	// hwm is the high-water mark (bbolt's size) as of the last write
	// transaction's start: the file must be at least that long.
	hwm atomic.Int64
}

// Path returns the path the database was opened from.
func (db *DB) Path() string { return db.path }

// ReadOnly reports whether the database was opened read-only.
func (db *DB) ReadOnly() bool { return db.readOnly }

// FileSize returns the size of the open database file.
func (db *DB) FileSize() (int64, error) {
	fi, err := db.file.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

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
//   - Timeout: Open has locked the file already (bbolt's own lock on the
//     same file then succeeds at once), so this only bounds the wait on
//     systems where Open cannot lock.
func boltOptions(o *Options, left time.Duration) *bolt.Options {
	return &bolt.Options{
		Timeout:         max(left, time.Millisecond),
		ReadOnly:        o.ReadOnly,
		NoSync:          o.NoSync,
		FreelistType:    bolt.FreelistMapType,
		NoFreelistSync:  false,
		PreLoadFreelist: true,
		InitialMmapSize: 1 << 30,
	}
}

// Open opens or creates the cdclog database at path. It waits up to
// Options.LockTimeout for another process's lock, and returns a database
// whose locked file is the one at path (see the package documentation).
func Open(path string, o Options) (*DB, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	db, err := open(path, &o)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
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
// database. It never writes to a database that has other content. A
// database that reads as empty only because one meta page is damaged
// (damagedMeta) and bbolt fell back on the other is refused as corrupt:
// in a compacted file (gc) the other meta page is the empty state the
// compaction started from, and creating the schema there would write
// over everything committed.
func (db *DB) checkSchema(noCreate bool, damagedMeta string) error {
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
	if damagedMeta != "" {
		return fmt.Errorf("%w: %s is damaged, and bbolt's other meta page describes an empty database: the file is a damaged database, not a new one (restore it from a copy)", ErrCorrupt, damagedMeta)
	}
	if db.readOnly || noCreate {
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
	if err := putID(meta); err != nil {
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
