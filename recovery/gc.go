package recovery

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// GCOptions tune GC. The zero value drops everything below the frontier
// and compacts.
type GCOptions struct {
	// KeepTimes keeps the WAL for this many times below the frontier
	// (for offline re-derivation of recent history).
	KeepTimes uint64
	// NoCompact only deletes, leaving the freed pages for reuse instead of
	// returning them to the file system.
	NoCompact   bool
	LockTimeout time.Duration
}

// GCResult reports what GC did.
type GCResult struct {
	Floor         uint64 `json:"floor"`
	ChunksDeleted int    `json:"chunks_deleted"`
	BytesBefore   int64  `json:"bytes_before"`
	BytesAfter    int64  `json:"bytes_after"`
}

// GC deletes the WAL entries below the frontier (less KeepTimes): their
// times are complete and their output is committed, in the same
// transactions that advanced the frontier. Then it compacts the file into a
// new one and renames it over the old, so disk space is returned. The
// checkpoint, output log, consumers and quarantine are kept intact.
func GC(path string, o GCOptions) (GCResult, error) {
	var res GCResult
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("gc %s: %w", path, ErrNotExist)
	}
	db, err := store.Open(path, store.Options{LockTimeout: o.LockTimeout})
	if err != nil {
		return res, err
	}
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	if fi, err := os.Stat(path); err == nil {
		res.BytesBefore = fi.Size()
	}
	if err := upgrade(db, slog.Default()); err != nil {
		return res, fmt.Errorf("gc %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		cp, ok, err := loadCheckpoint(tx)
		if err != nil {
			return err
		}
		if !ok {
			cp = newCheckpoint(0)
		}
		if err := crossCheck(tx, &cp, ok); err != nil || !ok {
			return err
		}
		floor := cp.Frontier
		if cp.Done {
			floor = ^uint64(0)
		}
		floor -= min(floor, o.KeepTimes)
		if floor <= cp.WALFloor {
			res.Floor = cp.WALFloor
			return nil
		}
		l, err := readLayout(tx)
		if err != nil {
			return err
		}
		if res.ChunksDeleted, err = l.wal.DeleteBelow(tx, floor); err != nil {
			return err
		}
		cp.WALFloor, res.Floor = floor, floor
		return cp.save(tx)
	})
	if err != nil {
		return res, fmt.Errorf("gc %s: %w", path, err)
	}
	if !o.NoCompact {
		if err := compact(db, path); err != nil {
			return res, fmt.Errorf("gc %s: %w", path, err)
		}
	}
	db.Close()
	db = nil
	if fi, err := os.Stat(path); err == nil {
		res.BytesAfter = fi.Size()
	}
	return res, nil
}

// compact copies db into a new file and renames it over path while db's
// lock is still held; store.Open notices the rename and reopens, so no
// process can keep writing to the old file.
func compact(db *store.DB, path string) error {
	tmp := path + ".gc-tmp"
	os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("create compacted file: %w", err)
	}
	err = store.Guard(func() error { return bolt.Compact(dst, db.DB, 64<<20) })
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("compact: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
