package recovery

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// GCOptions tune GC and Processor.GC. The zero value drops the WAL below
// the frontier, keeps every output record, and (offline) compacts.
type GCOptions struct {
	// KeepTimes keeps the WAL for this many times below the frontier
	// (for offline re-derivation of recent history).
	KeepTimes uint64
	// RetainOutput says which output records may be dropped (see
	// Retention); the zero value keeps them all.
	RetainOutput Retention
	// NoCompact only deletes, leaving the freed pages for reuse instead of
	// returning them to the file system. (Processor.GC never compacts.)
	NoCompact bool
	// LockTimeout bounds GC's wait for another process's lock.
	// (Processor.GC holds the database already.)
	LockTimeout time.Duration
}

// GCResult reports what GC did. The JSON field names are stable.
type GCResult struct {
	Floor         uint64 `json:"floor,string"` // a time: a string in JSON, exact beyond 2^53
	ChunksDeleted int    `json:"chunks_deleted"`
	// OutputFrom is the first record the output log holds after gc;
	// OutputChunksDeleted and OutputRecordsDropped count what this gc
	// dropped, and OutputHeldBy says what kept it from dropping more.
	OutputFrom           uint64 `json:"output_from"`
	OutputChunksDeleted  int    `json:"output_chunks_deleted"`
	OutputRecordsDropped uint64 `json:"output_records_dropped"`
	OutputHeldBy         string `json:"output_held_by"`
	BytesBefore          int64  `json:"bytes_before"`
	BytesAfter           int64  `json:"bytes_after"`
	// Compacted is set when the file was compacted (offline GC without
	// NoCompact).
	Compacted bool `json:"compacted"`
}

// GC deletes the WAL entries below the frontier (less KeepTimes): their
// times are complete and their output is committed, in the same
// transactions that advanced the frontier. With a limited RetainOutput it
// also drops the output records that the retention does not keep and
// that nothing needs (see Retention). Then it compacts the file into a
// new one and renames it over the old (store.DB.Replace), so disk space is
// returned. The checkpoint, consumers and quarantine are kept intact. GC
// needs the database to itself (it waits LockTimeout for another
// process's lock); while a processor runs, Processor.GC drops the same
// online, without compacting.
//
// GC never creates a database: a missing path, or a file that holds no
// committed cdclog state (an empty file), is ErrNotExist. A symbolic link
// is followed: the file it points to is compacted, keeping its mode and
// owner, and the link stays.
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
			res.OutputFrom = 1
			return err
		}
		if !cp.StartKnown {
			// The start is read from the output log's first progress
			// record, which retention may drop: record it first.
			if err := adoptStart(tx, &cp, 0, false); err != nil {
				return err
			}
		}
		changed, err := drop(tx, &cp, o, time.Now(), &res, nil)
		if err != nil || !changed {
			return err
		}
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
		res.Compacted = true
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

// GC drops, while the processor runs, what the offline GC drops: the WAL
// below the committed frontier (less o.KeepTimes), and the output records
// that o.RetainOutput lets go and that nothing needs (no registered
// consumer, output file or stream: see Retention). It runs in one
// transaction on the commit goroutine, between two group commits, so that
// appends, consumers and readers go on around it; an Output reader that
// was reading records it drops gets an *OutputDroppedError at its next
// read. It returns what it dropped.
//
// It never compacts (o.NoCompact and o.LockTimeout do not apply): the
// freed pages are reused by later commits, so the file stops growing but
// does not shrink. Compaction needs the database to itself: the offline
// GC (`cdclog gc`) once the processor is closed. BytesBefore and
// BytesAfter are both the file's size. Once handed to the commit
// goroutine, the transaction runs to its end even if ctx ends.
func (p *Processor) GC(ctx context.Context, o GCOptions) (GCResult, error) {
	var res GCResult
	if err := p.enter(); err != nil {
		return res, err
	}
	defer p.leave()
	var cp checkpoint
	var ws wal.Stats // st.wal once the transaction commits
	err := p.maintain(ctx, func(tx *bolt.Tx, st *commitState) error {
		res = GCResult{}
		cp, ws = p.lastCommitted(), st.wal
		changed, err := drop(tx, &cp, o, time.Now(), &res, &ws)
		if err != nil || !changed {
			return err
		}
		return saveCommitted(tx, &cp)
	}, func(st *commitState) {
		st.walFloor, st.outputFloor, st.wal = cp.WALFloor, cp.OutputFloor, ws
		p.publish(cp, ws)
	})
	if err != nil {
		return res, fmt.Errorf("gc %s: %w", p.db.Path(), err)
	}
	if fi, err := os.Stat(p.db.Path()); err == nil {
		res.BytesBefore, res.BytesAfter = fi.Size(), fi.Size()
	}
	if res.ChunksDeleted > 0 || res.OutputChunksDeleted > 0 {
		p.log.Info("gc", "wal_floor", res.Floor, "wal_chunks_deleted", res.ChunksDeleted,
			"output_from", res.OutputFrom, "output_records_dropped", res.OutputRecordsDropped)
	}
	return res, nil
}

// drop deletes the WAL and output that o lets go, in tx, and moves cp's
// floors; it reports whether it changed cp. With ws, the WAL's figures
// before it, it leaves there the figures after (see
// wal.Log.DeleteBelowUpdating).
func drop(tx *bolt.Tx, cp *checkpoint, o GCOptions, now time.Time, res *GCResult, ws *wal.Stats) (bool, error) {
	changed := false
	floor, err := keepBase(tx, cp, o.KeepTimes)
	if err != nil {
		return false, err
	}
	floor -= min(floor, o.KeepTimes)
	res.Floor = cp.WALFloor
	if floor > cp.WALFloor {
		l, err := readLayout(tx)
		if err != nil {
			return false, err
		}
		if res.ChunksDeleted, err = l.wal.DeleteBelowUpdating(tx, floor, ws, nil); err != nil {
			return false, err
		}
		cp.WALFloor, res.Floor, changed = floor, floor, true
	}
	before := cp.outputFrom()
	outFloor, by, err := outputFloor(tx, cp, o.RetainOutput, now)
	if err != nil {
		return false, err
	}
	res.OutputHeldBy = by
	if outFloor > before {
		if res.OutputChunksDeleted, err = dropOutput(tx, cp, outFloor); err != nil {
			return false, err
		}
		changed = changed || res.OutputChunksDeleted > 0
	}
	res.OutputFrom = cp.outputFrom()
	res.OutputRecordsDropped = res.OutputFrom - before
	return changed, nil
}

// keepBase returns the time that keep times are counted back from: the
// frontier, or, once the stream is complete (the frontier past every
// time), the lower bound of the output log's last progress statement,
// the unbounded one that completed it, so that --keep-wal N keeps the
// last N times of a complete stream as it does of a running one. Without
// keep, a complete stream's WAL is dropped whole (up to the unbounded
// statement).
func keepBase(tx *bolt.Tx, cp *checkpoint, keep uint64) (uint64, error) {
	if !cp.Done {
		return cp.Frontier, nil
	}
	if keep == 0 {
		return ^uint64(0), nil
	}
	_, last, err := outputTail(tx)
	if err != nil {
		return 0, err
	}
	if last == nil || last.Kind != cdc.KindProgress || !last.Progress.Unbounded {
		return ^uint64(0), nil // crossCheck reports such a log
	}
	return last.Progress.Lower, nil
}
