package recovery

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/store"
	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// checksumsKey names, in the meta bucket, where checksums begin in a
// database upgraded from schema 1: the first WAL chunk, output record
// and quarantine record written with one (8 bytes BE each), sealed. A
// database created with checksums has none: they begin at the start.
var checksumsKey = []byte("checksums_from")

// spansKey names, in the meta bucket, the first WAL chunk whose index
// record starts at the earliest time its entries speak about (schema 3;
// see "The pending state on disk" in the package documentation): 8 bytes
// BE, sealed. Without it every chunk is taken as written before.
var spansKey = []byte("spans_from")

// layout is how a database's records are stored, read at the start of
// each transaction that reads them: which carry checksums.
type layout struct {
	schema uint64
	// wal reads the write-ahead log (its LegacyBelow is the first chunk
	// with a checksum).
	wal wal.Log
	// outputFrom and quarantineFrom are the first output and quarantine
	// records with checksums: records keyed below them were written
	// without (schema 1).
	outputFrom, quarantineFrom uint64
	// sealed says whether the checkpoint and the consumers' positions
	// carry checksums (they are rewritten whole, so all do or none).
	sealed bool
	// spansFrom is the first WAL chunk whose index record's first time
	// is the earliest time its entries speak about (a statement's lower
	// bound): for the chunks before it, only the earliest entry time.
	spansFrom uint64
}

// legacy is the layout of a schema 1 database: no checksums anywhere.
var legacy = layout{schema: 1, wal: wal.Log{LegacyBelow: math.MaxUint64},
	outputFrom: math.MaxUint64, quarantineFrom: math.MaxUint64, spansFrom: math.MaxUint64}

// readLayout reads the layout from the meta bucket.
func readLayout(tx *bolt.Tx) (layout, error) {
	switch s := store.Schema(tx); {
	case s < store.ChecksumSchema:
		return legacy, nil
	case s > store.SchemaVersion:
		return layout{}, fmt.Errorf("%w: version %d", store.ErrNewerSchema, s)
	}
	l := layout{schema: store.Schema(tx), sealed: true, spansFrom: math.MaxUint64}
	meta := tx.Bucket(store.BucketMeta)
	if v := meta.Get(checksumsKey); v != nil {
		b, err := unsealMeta(checksumsKey, v, 24)
		if err != nil {
			return l, err
		}
		l.wal.LegacyBelow = binary.BigEndian.Uint64(b)
		l.outputFrom, l.quarantineFrom = binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[16:])
	}
	if v := meta.Get(spansKey); v != nil && l.schema >= store.PendingSchema {
		b, err := unsealMeta(spansKey, v, 8)
		if err != nil {
			return l, err
		}
		l.spansFrom = binary.BigEndian.Uint64(b)
	}
	return l, nil
}

// unsealMeta verifies a sealed meta record of n bytes.
func unsealMeta(key, v []byte, n int) ([]byte, error) {
	b, err := checksum.Unseal(key, v)
	if err == nil && len(b) != n {
		err = fmt.Errorf("%d bytes, want %d", len(b), n)
	}
	if err != nil {
		return nil, &store.CorruptError{Bucket: string(store.BucketMeta), Key: key, Reason: err.Error()}
	}
	return b, nil
}

// writeSpansFrom records the first WAL chunk indexed with its spans.
func writeSpansFrom(tx *bolt.Tx, chunk uint64) error {
	return tx.Bucket(store.BucketMeta).Put(spansKey, checksum.Seal(spansKey, binary.BigEndian.AppendUint64(nil, chunk)))
}

// writeChecksumsFrom records where checksums begin.
func writeChecksumsFrom(tx *bolt.Tx, walChunk, output, quarantine uint64) error {
	b := binary.BigEndian.AppendUint64(nil, walChunk)
	b = binary.BigEndian.AppendUint64(b, output)
	b = binary.BigEndian.AppendUint64(b, quarantine)
	return tx.Bucket(store.BucketMeta).Put(checksumsKey, checksum.Seal(checksumsKey, b))
}

// seal returns payload as a record stored under key in layout l: sealed
// with its checksum, or as it is in a schema 1 database.
func (l *layout) seal(key, payload []byte) []byte {
	if !l.sealed {
		return payload
	}
	return checksum.Seal(key, payload)
}

// unseal returns the payload of a small record (the checkpoint, a
// consumer's position) stored under key in bucket, verified when the
// layout seals them.
func (l *layout) unseal(bucket, key, v []byte) ([]byte, error) {
	if !l.sealed {
		return v, nil
	}
	p, err := checksum.Unseal(key, v)
	if err != nil {
		return nil, corruptRecord(bucket, key, "%v", err)
	}
	return p, nil
}

// unsealKeyed is unseal for a record of a log keyed by a sequence number
// (output, quarantine): the records from the first with a checksum on
// carry one, those before (schema 1) do not.
func unsealKeyed(bucket, key, v []byte, from uint64) ([]byte, error) {
	if len(key) != 8 {
		return nil, corruptRecord(bucket, key, "key is not 8 bytes")
	}
	if binary.BigEndian.Uint64(key) < from {
		return v, nil
	}
	p, err := checksum.Unseal(key, v)
	if err != nil {
		return nil, corruptRecord(bucket, key, "%v", err)
	}
	return p, nil
}

// corruptRecord returns the error for a damaged record. It copies the key,
// which may be the database's memory, valid only in its transaction.
func corruptRecord(bucket, key []byte, format string, args ...any) error {
	return &store.CorruptError{Bucket: string(bucket), Key: bytes.Clone(key), Reason: fmt.Sprintf(format, args...)}
}

// ensureSpansFrom records, in a database that has no record of it (a new
// one), that the WAL chunks from next on are indexed with their spans;
// earlier ones, if any, are then read as if they were not.
func ensureSpansFrom(tx *bolt.Tx, next uint64) error {
	if tx.Bucket(store.BucketMeta).Get(spansKey) != nil {
		return nil
	}
	return writeSpansFrom(tx, next)
}
