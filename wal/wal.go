package wal

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cdclog/cdclog/internal/checksum"
	bolt "go.etcd.io/bbolt"
)

// Bucket names, as created by package store.
var (
	bucketWAL = []byte("wal")
	bucketSeq = []byte("walseq")
)

// Sizes of an index record in the wal bucket: the fields, then (written
// since checksums) their CRC-32C.
const (
	indexFields = 32
	indexSize   = indexFields + checksum.Size
)

// Log reads a database's write-ahead log. The zero Log requires a
// checksum on every record, as a database created with checksums has.
type Log struct {
	// LegacyBelow is the first chunk sequence number written with a
	// checksum in a database created before checksums (schema 1) and
	// upgraded since: chunks numbered below it, and their index records,
	// may be without one and are then read unverified. Every record from
	// it on must carry a checksum that matches, so that a damaged version
	// byte or index record cannot pass a chunk off as an old one.
	LegacyBelow uint64
}

// putChunk stores a chunk's body under its sequence number in the walseq
// bucket (strictly ascending keys: bbolt only ever rewrites the last leaf)
// and its index record under its last time in the wal bucket (small
// values, so inserting a straggler's chunk among older times rewrites
// little).
func putChunk(wal, seq *bolt.Bucket, batch, chunk, first, last uint64, n int, value []byte) error {
	if err := seq.Put(binary.BigEndian.AppendUint64(nil, chunk), value); err != nil {
		return fmt.Errorf("wal: put chunk %d: %w", chunk, err)
	}
	k := walKey(last, chunk)
	if err := wal.Put(k, indexValue(k, index{first, last, batch, uint32(n), uint32(len(value))})); err != nil {
		return fmt.Errorf("wal: index chunk %d: %w", chunk, err)
	}
	return nil
}

// index is a chunk's index record.
type index struct {
	first, last, batch uint64
	entries, size      uint32
}

// indexValue encodes an index record with its checksum.
func indexValue(k []byte, x index) []byte {
	v := make([]byte, 0, indexSize)
	v = binary.BigEndian.AppendUint64(v, x.first)
	v = binary.BigEndian.AppendUint64(v, x.last)
	v = binary.BigEndian.AppendUint64(v, x.batch)
	v = binary.BigEndian.AppendUint32(v, x.entries)
	v = binary.BigEndian.AppendUint32(v, x.size)
	return binary.BigEndian.AppendUint32(v, checksum.Of(k, v))
}

// readIndex verifies and decodes the index record v stored under key k.
// The chunk's last time is both in the key and in the record; they must
// agree, which a record without a checksum can show.
func (l Log) readIndex(k, v []byte) (index, error) {
	if len(k) != 16 {
		return index{}, corrupt(bucketWAL, k, "index key is not 16 bytes")
	}
	switch {
	case len(v) == indexSize:
		if err := checksum.Verify(binary.BigEndian.Uint32(v[indexFields:]), k, v[:indexFields]); err != nil {
			return index{}, corrupt(bucketWAL, k, err.Error())
		}
	case len(v) == indexFields && binary.BigEndian.Uint64(k[8:]) < l.LegacyBelow:
	case len(v) == indexFields:
		return index{}, corrupt(bucketWAL, k, "index record without a checksum")
	default:
		return index{}, corrupt(bucketWAL, k, fmt.Sprintf("index record of %d bytes", len(v)))
	}
	x := index{
		first: binary.BigEndian.Uint64(v), last: binary.BigEndian.Uint64(v[8:]), batch: binary.BigEndian.Uint64(v[16:]),
		entries: binary.BigEndian.Uint32(v[24:]), size: binary.BigEndian.Uint32(v[28:]),
	}
	if x.last != binary.BigEndian.Uint64(k) || x.first > x.last {
		return x, corrupt(bucketWAL, k, fmt.Sprintf("index record says times %d to %d, its key %d", x.first, x.last, binary.BigEndian.Uint64(k)))
	}
	return x, nil
}

func walKey(last, chunk uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, last)
	binary.BigEndian.PutUint64(k[8:], chunk)
	return k
}

func buckets(tx *bolt.Tx) (wal, seq *bolt.Bucket, err error) {
	wal, seq = tx.Bucket(bucketWAL), tx.Bucket(bucketSeq)
	if wal == nil {
		return nil, nil, corrupt(bucketWAL, nil, "bucket missing")
	}
	if seq == nil {
		return nil, nil, corrupt(bucketSeq, nil, "bucket missing")
	}
	return wal, seq, nil
}

// Scan calls fn for every entry whose time is at least from, in the order
// of the index (by chunk's last time, then arrival). Each index record and
// chunk it reads is verified, and each chunk against its index record. An
// error from fn stops the scan and is returned.
func (l Log) Scan(tx *bolt.Tx, from uint64, fn func(*Entry) error) error {
	wal, seq, err := buckets(tx)
	if err != nil {
		return err
	}
	return l.eachIndex(wal, from, func(k []byte, x index) error {
		body := seq.Get(k[8:])
		if body == nil {
			return corrupt(bucketWAL, k, "the chunk it indexes is missing")
		}
		return l.eachEntry(k[8:], body, &x, func(e *Entry) error {
			if e.Time < from {
				return nil
			}
			return fn(e)
		})
	})
}

// eachIndex calls fn, in index order, with the key and verified record of
// every chunk whose last time is at least from. A damaged key that now
// sorts below from would hide its chunk from the seek; in a leaf, the seek
// then lands just after it, so the record before the first one visited is
// verified too.
func (l Log) eachIndex(wal *bolt.Bucket, from uint64, fn func(k []byte, x index) error) error {
	c := wal.Cursor()
	seek := binary.BigEndian.AppendUint64(nil, from)
	c.Seek(seek)
	if k, v := c.Prev(); k != nil {
		if _, err := l.readIndex(k, v); err != nil {
			return err
		}
	}
	for k, v := c.Seek(seek); k != nil; k, v = c.Next() {
		x, err := l.readIndex(k, v)
		if err != nil {
			return err
		}
		if err := fn(k, x); err != nil {
			return err
		}
	}
	return nil
}

// eachEntry verifies and decodes the chunk with key k and calls fn for
// each entry. With x, the chunk's index record, the chunk must agree with
// it: its size, batch and entry count, and every entry's time within its
// times. Damage is a *store.CorruptError naming the chunk; fn's errors
// are returned as they are.
func (l Log) eachEntry(k, body []byte, x *index, fn func(*Entry) error) error {
	r, reason := openChunk(k, body, binary.BigEndian.Uint64(k) < l.LegacyBelow)
	if reason != "" {
		return corrupt(bucketSeq, k, reason)
	}
	if x != nil && (uint64(x.size) != uint64(len(body)) || x.batch != r.batch || uint64(x.entries) != r.left) {
		return corrupt(bucketSeq, k, fmt.Sprintf("chunk of %d bytes, batch %d, %d entries; its index record says %d, %d, %d",
			len(body), r.batch, r.left, x.size, x.batch, x.entries))
	}
	var e Entry
	for {
		ok, reason := r.next(&e)
		if reason != "" {
			return corrupt(bucketSeq, k, reason)
		}
		if !ok {
			return nil
		}
		if x != nil && (e.Time < x.first || e.Time > x.last) {
			return corrupt(bucketSeq, k, fmt.Sprintf("entry %d at time %d, outside the chunk's times %d to %d", e.Arrival, e.Time, x.first, x.last))
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
}

// ChunkInfo is what a chunk's index record says of it.
type ChunkInfo struct {
	// Seq is the chunk's sequence number.
	Seq uint64
	// First and Last bound the times its entries speak about: First is
	// the smallest Time - Span (in chunks written before spans were
	// indexed, the smallest Time), Last the largest Time.
	First, Last uint64
}

// Chunks calls fn, in index order, for every chunk whose last time is at
// least from: the chunks that Scan(from) reads. Each index record is
// verified (and the one before the first, as Scan does).
func (l Log) Chunks(tx *bolt.Tx, from uint64, fn func(ChunkInfo) error) error {
	wal, _, err := buckets(tx)
	if err != nil {
		return err
	}
	return l.eachIndex(wal, from, func(k []byte, x index) error {
		return fn(ChunkInfo{Seq: binary.BigEndian.Uint64(k[8:]), First: x.first, Last: x.last})
	})
}

// ReadChunk calls fn for each entry of one chunk, in arrival order,
// verifying the chunk and its index record as Scan does. A chunk that
// is not there is a *store.CorruptError.
func (l Log) ReadChunk(tx *bolt.Tx, ci ChunkInfo, fn func(*Entry) error) error {
	wal, seq, err := buckets(tx)
	if err != nil {
		return err
	}
	k := walKey(ci.Last, ci.Seq)
	v := wal.Get(k)
	if v == nil {
		return corrupt(bucketWAL, k, "no index record for a chunk the log listed")
	}
	x, err := l.readIndex(k, v)
	if err != nil {
		return err
	}
	body := seq.Get(k[8:])
	if body == nil {
		return corrupt(bucketWAL, k, "the chunk it indexes is missing")
	}
	return l.eachEntry(k[8:], body, &x, fn)
}

// ScanArrival calls fn for every entry in the order it was appended: the
// chunks in sequence, each in arrival order. Each chunk is verified.
//
// Version 1 chunks may not be in arrival order: before chunks were cut in
// arrival order, cdclog sorted each batch (one group commit) by time and
// cut that into chunks, still of version 1. So the entries of consecutive
// version 1 chunks of one batch are gathered and sorted by arrival (one
// batch's entries in memory at a time, as ScanArrival did then); chunks of
// later versions are streamed.
func (l Log) ScanArrival(tx *bolt.Tx, fn func(*Entry) error) error {
	_, seq, err := buckets(tx)
	if err != nil {
		return err
	}
	var (
		batch   []Entry // the entries of the version 1 chunks of one batch
		batchOf uint64
	)
	flush := func() error {
		slices.SortFunc(batch, func(x, y Entry) int { return cmp.Compare(x.Arrival, y.Arrival) })
		for i := range batch {
			if err := fn(&batch[i]); err != nil {
				return err
			}
		}
		batch = batch[:0]
		return nil
	}
	c := seq.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return corrupt(bucketSeq, k, "chunk key is not 8 bytes")
		}
		if len(v) == 0 || v[0] != chunkV1 {
			if err := flush(); err != nil {
				return err
			}
			if err := l.eachEntry(k, v, nil, fn); err != nil {
				return err
			}
			continue
		}
		r, reason := openChunk(k, v, binary.BigEndian.Uint64(k) < l.LegacyBelow)
		if reason != "" {
			return corrupt(bucketSeq, k, reason)
		}
		if r.batch != batchOf {
			if err := flush(); err != nil {
				return err
			}
			batchOf = r.batch
		}
		err := l.eachEntry(k, v, nil, func(e *Entry) error {
			batch = append(batch, *e)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return flush()
}

// Tail describes the last chunk appended: what a checkpoint's counters
// must be past.
type Tail struct {
	// Empty is set when the log holds no chunk.
	Empty bool
	// Chunk and Batch are the last chunk's sequence number and batch.
	Chunk, Batch uint64
	// MaxArrival is the largest arrival number in it.
	MaxArrival uint64
}

// ReadTail reads and verifies the last chunk (by sequence number). It
// costs one chunk's read, for a cheap cross-check at open.
func (l Log) ReadTail(tx *bolt.Tx) (Tail, error) {
	_, seq, err := buckets(tx)
	if err != nil {
		return Tail{}, err
	}
	k, v := seq.Cursor().Last()
	if k == nil {
		return Tail{Empty: true}, nil
	}
	if len(k) != 8 {
		return Tail{}, corrupt(bucketSeq, k, "chunk key is not 8 bytes")
	}
	t := Tail{Chunk: binary.BigEndian.Uint64(k)}
	r, reason := openChunk(k, v, t.Chunk < l.LegacyBelow)
	if reason != "" {
		return t, corrupt(bucketSeq, k, reason)
	}
	t.Batch = r.batch
	err = l.eachEntry(k, v, nil, func(e *Entry) error {
		t.MaxArrival = max(t.MaxArrival, e.Arrival)
		return nil
	})
	return t, err
}
