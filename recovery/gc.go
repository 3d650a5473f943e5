package recovery

import (
	"fmt"
	"log/slog"
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
	Floor         uint64 `json:"floor,string"` // a time: a string in JSON, exact beyond 2^53
	ChunksDeleted int    `json:"chunks_deleted"`
	BytesBefore   int64  `json:"bytes_before"`
	BytesAfter    int64  `json:"bytes_after"`
}

// GC deletes the WAL entries below the frontier (less KeepTimes): their
// times are complete and their output is committed, in the same
// transactions that advanced the frontier. Then it compacts the file into a
// new one and renames it over the old (store.DB.Replace), so disk space is
// returned. The checkpoint, output log, consumers and quarantine are kept
// intact. GC never creates a database: a missing path, or a file that
// holds no committed cdclog state (an empty file), is ErrNotExist. A
// symbolic link is followed: the file it points to is compacted, keeping
// its mode and owner, and the link stays.
func GC(path string, o GCOptions) (GCResult, error) {
	var res GCResult
	db, err := store.Open(path, store.Options{LockTimeout: o.LockTimeout, NoCreate: true})
	if err != nil {
		return res, err
	}
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	if res.BytesBefore, err = db.FileSize(); err != nil {
		return res, fmt.Errorf("gc %s: %w", path, err)
	}
	res.BytesAfter = res.BytesBefore
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
		// The compacted file replaces the old one while this process
		// holds the old one's lock; store.Open checks, after winning a
		// lock, that its file is still the one at the path, so no process
		// can keep writing to the old file.
		src := db.DB
		res.BytesAfter, err = db.Replace(func(dst *bolt.DB) error { return bolt.Compact(dst, src, 64<<20) })
		if err != nil {
			return res, fmt.Errorf("gc %s: compact: %w", path, err)
		}
	} else if res.BytesAfter, err = db.FileSize(); err != nil {
		return res, fmt.Errorf("gc %s: %w", path, err)
	}
	err = db.Close()
	db = nil
	if err != nil {
		return res, fmt.Errorf("gc %s: %w", path, err)
	}
	return res, nil
}
