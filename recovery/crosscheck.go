package recovery

import (
	"encoding/binary"
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// crossCheck compares the checkpoint with the ends of the logs it counts.
// The checksums show that each record is as it was written; these show
// that the records agree with one another, which catches what a checksum
// cannot: a damaged field of a database written before checksums (schema
// 1), or a checkpoint and logs from different commits (a page that went
// back in time). Each costs one key or one chunk, so Open, OpenReader, GC
// and the upgrade run them all every time:
//
//   - the output log ends at record NextOutput-1, and its last record is
//     the progress statement of the frontier's last step: its upper bound
//     is the frontier (or it is unbounded and the stream complete);
//   - the output log's first chunk starts at the output floor (record 1
//     unless gc's retention dropped the chunks before it);
//   - the output file holds no record past the log (Sink.Next), and its
//     committed size is not negative;
//   - the WAL's last chunk is numbered below NextChunk, was written in a
//     batch up to NextBatch, and holds arrivals below NextArrival; the WAL
//     floor is not above the frontier;
//   - the quarantine ends at record NextQuarantine-1, which is also the
//     count of quarantined messages;
//   - a database without a checkpoint holds no records.
//
// ok says whether the checkpoint was stored (it is new otherwise). A
// disagreement is a *store.CorruptError naming the checkpoint and wrapping
// ErrInconsistent too.
func crossCheck(tx *bolt.Tx, cp *checkpoint, ok bool) error {
	l, err := readLayout(tx)
	if err != nil {
		return err
	}
	fail := func(format string, args ...any) error {
		return &store.CorruptError{Bucket: string(store.BucketCheckpoint), Key: checkpointKey,
			Reason: fmt.Sprintf(format, args...), Err: ErrInconsistent}
	}
	nextOut, last, err := outputTail(tx)
	if err != nil {
		return err
	}
	wt, err := l.wal.ReadTail(tx)
	if err != nil {
		return err
	}
	qk, _ := tx.Bucket(store.BucketQuarantine).Cursor().Last()
	if !ok {
		if nextOut != 1 || !wt.Empty || qk != nil {
			return fail("no checkpoint, but the logs hold records")
		}
		return nil
	}
	if nextOut != cp.NextOutput {
		return fail("next output record %d, but the output log ends at record %d", cp.NextOutput, nextOut-1)
	}
	if first, ok := outputHead(tx); ok && first != cp.outputFrom() {
		return fail("the output log is said to start at record %d (gc's output floor), but its first chunk starts at record %d", cp.outputFrom(), first)
	}
	if err := checkFrontier(cp, last, fail); err != nil {
		return err
	}
	switch {
	case cp.Sink.Next > cp.NextOutput:
		return fail("the output file is said to hold records up to %d, past the output log's end at %d", cp.Sink.Next-1, cp.NextOutput-1)
	case cp.Sink.Size < 0:
		return fail("output file size %d", cp.Sink.Size)
	case !cp.Done && cp.WALFloor > cp.Frontier:
		return fail("WAL floor %d above the frontier %d", cp.WALFloor, cp.Frontier)
	case !wt.Empty && (wt.Chunk >= cp.NextChunk || wt.Batch > cp.NextBatch || wt.MaxArrival >= cp.NextArrival):
		// A batch's chunks carry the batch count after it (NextBatch
		// once the batch is applied).
		return fail("the WAL's last chunk (%d, batch %d, arrivals to %d) is past the checkpoint's next chunk %d, batch count %d, next arrival %d",
			wt.Chunk, wt.Batch, wt.MaxArrival, cp.NextChunk, cp.NextBatch, cp.NextArrival)
	case cp.Quarantined != cp.NextQuarantine-1:
		return fail("%d messages quarantined, but the next quarantine record is %d", cp.Quarantined, cp.NextQuarantine)
	case qk == nil && cp.NextQuarantine != 1, qk != nil && (len(qk) != 8 || binary.BigEndian.Uint64(qk)+1 != cp.NextQuarantine):
		return fail("next quarantine record %d, but the quarantine ends at key %s", cp.NextQuarantine, store.FormatKey(qk))
	}
	return nil
}

// checkFrontier checks the frontier against the output log's last record
// (nil when the log is empty: nothing was released, so the frontier is
// still the one the database was created with, which nothing else holds).
// Part-way through a release (cp.Releasing) with Released records out
// since its last statement, the log ends with one of them: an update at
// or above the frontier.
func checkFrontier(cp *checkpoint, last *cdc.Message, fail func(string, ...any) error) error {
	if cp.Releasing && cp.Released > 0 {
		switch {
		case cp.Done:
			return fail("a release is said to be under way, but the stream is complete")
		case cp.Released >= cp.NextOutput:
			return fail("%d records of a release are said to be out, but the output log ends at record %d", cp.Released, cp.NextOutput-1)
		case last == nil || last.Kind != cdc.KindUpdate || last.Update.Time < cp.Frontier:
			return fail("a release is under way from frontier %d, but the output log does not end with an update at or above it", cp.Frontier)
		}
		return nil
	}
	switch {
	case last == nil && cp.Done:
		return fail("the stream is complete, but the output log is empty")
	case last == nil:
		return nil
	case last.Kind != cdc.KindProgress:
		return fail("the output log ends with an update, not with the progress statement of a step")
	case last.Progress.Unbounded != cp.Done:
		return fail("complete %v, but the output log's last progress statement says %v", cp.Done, last.Progress.Unbounded)
	case !cp.Done && last.Progress.Upper != cp.Frontier:
		return fail("frontier %d, but the output log's last progress statement ends at %d", cp.Frontier, last.Progress.Upper)
	}
	return nil
}

// outputHead returns the key of the output log's first chunk; ok is false
// when the log is empty or the key is damaged (outputTail reports that).
func outputHead(tx *bolt.Tx) (first uint64, ok bool) {
	k, _ := tx.Bucket(store.BucketOutput).Cursor().First()
	if len(k) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k), true
}

// outputTail reads the output log's last chunk: the sequence number after
// its last record (1 when the log is empty) and that record (nil then),
// copied out of the database.
func outputTail(tx *bolt.Tx) (next uint64, last *cdc.Message, err error) {
	b := tx.Bucket(store.BucketOutput)
	if b == nil {
		return 0, nil, corruptRecord(store.BucketOutput, nil, "bucket missing")
	}
	k, _ := b.Cursor().Last()
	if k == nil {
		return 1, nil, nil
	}
	if len(k) != 8 {
		return 0, nil, corruptRecord(store.BucketOutput, k, "key is not 8 bytes")
	}
	it, err := newOutputIter(tx, binary.BigEndian.Uint64(k))
	if err != nil {
		return 0, nil, err
	}
	for {
		seq, m, ok, err := it.next()
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			return seq, last, nil
		}
		c := cloneMessage(m)
		last = &c
	}
}
