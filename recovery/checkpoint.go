package recovery

import (
	"fmt"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/store"
	"github.com/vmihailenco/msgpack/v5"
	bolt "go.etcd.io/bbolt"
)

var checkpointKey = []byte("state")

// checkpoint is the processor's durable state besides the logs, written in
// the same transaction as every batch. It is small: the receiver's state is
// rebuilt from the WAL, not stored here.
type checkpoint struct {
	Frontier uint64 `msgpack:"frontier"`
	Done     bool   `msgpack:"done"`
	// Next sequence numbers: WAL arrival, WAL chunk, batch, output record
	// (output records are numbered from 1), quarantine record.
	NextArrival    uint64 `msgpack:"next_arrival"`
	NextChunk      uint64 `msgpack:"next_chunk"`
	NextBatch      uint64 `msgpack:"next_batch"`
	NextOutput     uint64 `msgpack:"next_output"`
	NextQuarantine uint64 `msgpack:"next_quarantine"`
	// Sink is what the exactly-once output file holds.
	Sink sinkState `msgpack:"sink"`
	// Files are the other output files this database has written, as
	// each was when the database last wrote it, so that going back to one
	// checks it and catches it up (absent in databases before version 1
	// of sinkState).
	Files []sinkState `msgpack:"files"`
	// LiveNext is the first output record not known to have been written
	// to a live stream (Options.Live); see livestream.go. 0 in databases from
	// before it.
	LiveNext uint64 `msgpack:"live_next"`
	// Cursors are the producers' committed positions, opaque here.
	Cursors map[string][]byte `msgpack:"cursors"`
	// Sources names the sources of WAL entries (entries hold an index).
	Sources []string       `msgpack:"sources"`
	Stats   demangle.Stats `msgpack:"stats"`
	// Skipped and Quarantined count rejected messages by policy.
	Skipped     uint64 `msgpack:"skipped"`
	Quarantined uint64 `msgpack:"quarantined"`
	// Spilled says that the receiver held in memory only the times below
	// Horizon: the WAL entries at or beyond it were accepted unjudged, and
	// Cold of them were not judged yet (see "The pending state on disk"
	// in the package documentation). Absent (false) before schema 3.
	Horizon uint64 `msgpack:"horizon"`
	Spilled bool   `msgpack:"spilled"`
	Cold    int64  `msgpack:"cold"`
	// Judged says which WAL entries beyond the frontier were judged
	// already, though not in memory now ([last time, below arrival + 1]
	// pairs, demangle.Judged), so that loading them again reports nothing.
	Judged [][2]uint64 `msgpack:"judged"`
	// Releasing says that the receiver was part-way through a release
	// (a step whose output passed a batch's bound, such as a big time:
	// demangle.Receiver.Releasing), of which Released update records
	// follow, in the output log, the last progress statement, whose upper
	// bound is Frontier. Absent (false, 0) in databases from before it.
	Releasing bool   `msgpack:"releasing"`
	Released  uint64 `msgpack:"released"`
	// WALFloor is the frontier at the last gc: every WAL chunk wholly
	// below it was deleted (a chunk straddling it keeps its older entries,
	// which the rebuild at Open drops as stale).
	WALFloor uint64 `msgpack:"wal_floor"`
	// OutputFloor is the first record the output log holds: gc's
	// retention dropped the chunks before it (0 or 1: none dropped; 0 in
	// databases from before retention).
	OutputFloor uint64 `msgpack:"output_floor"`
	// Start is the frontier the database was created with (Options.Start),
	// when StartKnown; a checkpoint from before it was recorded has
	// neither, and Open infers it (see databaseStart).
	Start      uint64 `msgpack:"start"`
	StartKnown bool   `msgpack:"start_known"`
	// Committed is when this checkpoint was written (Unix nanoseconds).
	Committed int64 `msgpack:"committed"`

	// sourceIndex maps each name of the first sourceIndexed of Sources
	// to its index, kept up by source (not stored): a database that has
	// read many files has as many sources, and every accepted message
	// looks its source up.
	sourceIndex   map[string]uint64
	sourceIndexed int
}

// sinkState is the committed state of an output file.
type sinkState struct {
	Name   string `msgpack:"name"`
	Format string `msgpack:"format"`
	Size   int64  `msgpack:"size"`
	// Next is the sequence number of the first record not in the file.
	Next uint64 `msgpack:"next"`

	// V is the version of the fields below: 0 in databases written before
	// they existed (which have none of them); 1 when the file was written
	// before its batch committed (what follows Size after a crash may be
	// records never committed); 2 since the file receives only committed
	// records, and FileCRC covers every byte before Size.
	V int `msgpack:"v"`
	// TailCRC is the CRC-32C of the TailLen bytes before Size (the last
	// sinkTailSize bytes, or all when fewer): what Open checks to know
	// that the file is still the one this database wrote.
	TailLen int64  `msgpack:"tail_len"`
	TailCRC uint32 `msgpack:"tail_crc"`
	// Limit bounds the file's length until the next checkpoint: nothing
	// is written past it before a checkpoint that raises it is durable
	// (see sinkWriter), so an interrupted run cannot have left more.
	Limit int64 `msgpack:"limit"`
	// Inode is the file's inode number as last opened (0: unknown).
	Inode uint64 `msgpack:"inode"`
	// Frontier and Done are the frontier after the file's last record,
	// when Chained: the next progress record in the file starts there.
	Frontier uint64 `msgpack:"frontier"`
	Done     bool   `msgpack:"done"`
	Chained  bool   `msgpack:"chained"`
	// FileCRC is the CRC-32C of the file's first Size bytes (V 2).
	FileCRC uint32 `msgpack:"file_crc"`
}

// sinkStateVersion is the version of sinkState this code writes.
const sinkStateVersion = 2

func newCheckpoint(start uint64) checkpoint {
	return checkpoint{Frontier: start, Start: start, StartKnown: true, NextOutput: 1, NextQuarantine: 1, Sink: sinkState{Next: 1}}
}

// outputFrom returns the first record the output log holds (see
// OutputFloor).
func (cp *checkpoint) outputFrom() uint64 { return max(cp.OutputFloor, 1) }

// loadCheckpoint reads the checkpoint, verifying its checksum (see save);
// ok is false in a new database.
func loadCheckpoint(tx *bolt.Tx) (cp checkpoint, ok bool, err error) {
	l, err := readLayout(tx)
	if err != nil {
		return cp, false, err
	}
	b := tx.Bucket(store.BucketCheckpoint)
	if b == nil {
		return cp, false, corruptRecord(store.BucketCheckpoint, nil, "bucket missing")
	}
	v := b.Get(checkpointKey)
	if v == nil {
		return cp, false, nil
	}
	if v, err = l.unseal(store.BucketCheckpoint, checkpointKey, v); err != nil {
		return cp, false, err
	}
	if err := cdc.CheckMsgpackBounds(v); err != nil { // else damaged counts can exhaust memory
		return cp, false, corruptRecord(store.BucketCheckpoint, checkpointKey, "%v", err)
	}
	if err := msgpack.Unmarshal(v, &cp); err != nil {
		return cp, false, corruptRecord(store.BucketCheckpoint, checkpointKey, "%v", err)
	}
	if cp.NextOutput == 0 || cp.Sink.Next == 0 || cp.NextQuarantine == 0 {
		return cp, false, corruptRecord(store.BucketCheckpoint, checkpointKey, "zero sequence numbers")
	}
	return cp, true, nil
}

// save writes the checkpoint: its msgpack encoding sealed with a CRC-32C
// of the key and the encoding (internal/checksum). Only a database with
// checksums is written to (Open and GC upgrade an older one first), so a
// checkpoint is always sealed when written; it refuses any other, rather
// than write a sealed record where readers expect none.
func (cp *checkpoint) save(tx *bolt.Tx) error {
	cp.Committed = time.Now().UnixNano()
	return cp.put(tx)
}

// put writes the checkpoint as it is (save stamps it first).
func (cp *checkpoint) put(tx *bolt.Tx) error {
	if s := store.Schema(tx); s != store.SchemaVersion {
		return fmt.Errorf("write checkpoint: the database has schema %d, not %d (not upgraded)", s, store.SchemaVersion)
	}
	v, err := msgpack.Marshal(cp)
	if err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	if err := tx.Bucket(store.BucketCheckpoint).Put(checkpointKey, checksum.Seal(checkpointKey, v)); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

// source returns the index of a source name, adding it when new.
func (cp *checkpoint) source(name string) uint64 {
	if cp.sourceIndex == nil {
		cp.sourceIndex, cp.sourceIndexed = make(map[string]uint64, len(cp.Sources)), 0
	}
	for ; cp.sourceIndexed < len(cp.Sources); cp.sourceIndexed++ {
		if _, dup := cp.sourceIndex[cp.Sources[cp.sourceIndexed]]; !dup { // the first one, as a scan finds
			cp.sourceIndex[cp.Sources[cp.sourceIndexed]] = uint64(cp.sourceIndexed)
		}
	}
	if i, ok := cp.sourceIndex[name]; ok {
		return i
	}
	cp.Sources = append(cp.Sources, name)
	cp.sourceIndex[name], cp.sourceIndexed = uint64(len(cp.Sources)-1), len(cp.Sources)
	return uint64(len(cp.Sources) - 1)
}

func (cp *checkpoint) sourceName(i uint64) string {
	if i < uint64(len(cp.Sources)) {
		return cp.Sources[i]
	}
	return ""
}

// clone returns a copy, safe to hand to the commit goroutine. Sources is
// shared, capped at its length: names are only ever appended, and an
// append to either copy then writes past what the other one sees (or to a
// new array), so sharing costs nothing where copying cost every batch
// O(sources). The source index is not copied (source rebuilds it).
func (cp *checkpoint) clone() checkpoint {
	c := *cp
	c.Sources = cp.Sources[:len(cp.Sources):len(cp.Sources)]
	c.sourceIndex, c.sourceIndexed = nil, 0
	c.Files = append([]sinkState(nil), cp.Files...)
	c.Judged = append([][2]uint64(nil), cp.Judged...)
	if cp.Cursors != nil {
		c.Cursors = make(map[string][]byte, len(cp.Cursors))
		for k, v := range cp.Cursors {
			c.Cursors[k] = v
		}
	}
	return c
}

// horizon returns the receiver's horizon state as checkpointed.
func (cp *checkpoint) horizon() demangle.HorizonState {
	h := demangle.HorizonState{Horizon: cp.Horizon, Spilled: cp.Spilled, Seq: cp.NextArrival + 1, Cold: cp.Cold,
		Releasing: cp.Releasing, Released: cp.Released}
	for _, j := range cp.Judged {
		h.Judged = append(h.Judged, demangle.Judged{Last: j[0], Seq: j[1]})
	}
	return h
}

// setHorizon records the receiver's horizon state (its Seq is NextArrival
// + 1, which the apply goroutine keeps).
func (cp *checkpoint) setHorizon(h demangle.HorizonState) {
	cp.Horizon, cp.Spilled, cp.Cold = h.Horizon, h.Spilled, h.Cold
	cp.Releasing, cp.Released = h.Releasing, h.Released
	cp.Judged = cp.Judged[:0]
	for _, j := range h.Judged {
		cp.Judged = append(cp.Judged, [2]uint64{j.Last, j.Seq})
	}
}
