package wal

import (
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Bucket names, as created by package store.
var (
	bucketWAL = []byte("wal")
	bucketSeq = []byte("walseq")
)

// indexSize is the size of an index record in the wal bucket.
const indexSize = 32

// putChunk stores a chunk's body under its sequence number in the walseq
// bucket (strictly ascending keys: bbolt only ever rewrites the last leaf)
// and its index record under its last time in the wal bucket (small
// values, so inserting a straggler's chunk among older times rewrites
// little).
func putChunk(wal, seq *bolt.Bucket, batch, chunk, first, last uint64, n int, value []byte) error {
	if err := seq.Put(binary.BigEndian.AppendUint64(nil, chunk), value); err != nil {
		return fmt.Errorf("wal: put chunk %d: %w", chunk, err)
	}
	idx := make([]byte, 0, indexSize)
	idx = binary.BigEndian.AppendUint64(idx, first)
	idx = binary.BigEndian.AppendUint64(idx, last)
	idx = binary.BigEndian.AppendUint64(idx, batch)
	idx = binary.BigEndian.AppendUint32(idx, uint32(n))
	idx = binary.BigEndian.AppendUint32(idx, uint32(len(value)))
	if err := wal.Put(walKey(last, chunk), idx); err != nil {
		return fmt.Errorf("wal: index chunk %d: %w", chunk, err)
	}
	return nil
}

func walKey(last, chunk uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, last)
	binary.BigEndian.PutUint64(k[8:], chunk)
	return k
}

func buckets(tx *bolt.Tx) (wal, seq *bolt.Bucket, err error) {
	wal, seq = tx.Bucket(bucketWAL), tx.Bucket(bucketSeq)
	if wal == nil || seq == nil {
		return nil, nil, fmt.Errorf("%w: wal buckets missing", ErrCorrupt)
	}
	return wal, seq, nil
}

// Scan calls fn for every entry whose time is at least from, in the order
// of the index (by chunk's last time, then arrival). An error from fn
// stops the scan and is returned.
func Scan(tx *bolt.Tx, from uint64, fn func(*Entry) error) error {
	wal, seq, err := buckets(tx)
	if err != nil {
		return err
	}
	c := wal.Cursor()
	for k, _ := c.Seek(binary.BigEndian.AppendUint64(nil, from)); k != nil; k, _ = c.Next() {
		if len(k) != 16 {
			return fmt.Errorf("%w: bad index key %x", ErrCorrupt, k)
		}
		body := seq.Get(k[8:])
		if body == nil {
			return fmt.Errorf("%w: chunk %x indexed but missing", ErrCorrupt, k[8:])
		}
		err := eachEntry(k[8:], body, func(e *Entry) error {
			if e.Time < from {
				return nil
			}
			return fn(e)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// eachEntry decodes the chunk with key k and calls fn for each entry. A
// decoding error names the chunk; fn's errors are returned as they are.
func eachEntry(k, body []byte, fn func(*Entry) error) error {
	r, err := newChunkReader(body)
	if err != nil {
		return fmt.Errorf("wal chunk %x: %w", k, err)
	}
	var e Entry
	for {
		ok, err := r.next(&e)
		if err != nil {
			return fmt.Errorf("wal chunk %x: %w", k, err)
		}
		if !ok {
			return nil
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
}

// ScanArrival calls fn for every entry in the order it was appended: the
// chunks in sequence, each in arrival order.
func ScanArrival(tx *bolt.Tx, fn func(*Entry) error) error {
	_, seq, err := buckets(tx)
	if err != nil {
		return err
	}
	c := seq.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := eachEntry(k, v, fn); err != nil {
			return err
		}
	}
	return nil
}

// DeleteBelow removes every chunk whose entries are all below t and
// returns how many chunks it removed.
func DeleteBelow(tx *bolt.Tx, t uint64) (int, error) {
	wal, seq, err := buckets(tx)
	if err != nil {
		return 0, err
	}
	var keys [][]byte
	c := wal.Cursor()
	for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) < t; k, _ = c.Next() {
		keys = append(keys, slices.Clone(k))
	}
	for _, k := range keys {
		if err := seq.Delete(k[8:]); err != nil {
			return 0, fmt.Errorf("wal: delete chunk: %w", err)
		}
		if err := wal.Delete(k); err != nil {
			return 0, fmt.Errorf("wal: delete chunk index: %w", err)
		}
	}
	return len(keys), nil
}

// Stats describes the log's contents.
type Stats struct {
	Chunks  int
	Entries uint64
	// Bytes is the size of the log's keys and values (chunks and index).
	Bytes int64
	// MinTime and MaxTime bound the entries' times; zero when empty.
	MinTime, MaxTime uint64
}

// ReadStats computes the log's statistics from its index alone: it reads
// 32 bytes per chunk, never the chunks, so it is cheap on a big log (and
// does not pull the whole file into memory).
func ReadStats(tx *bolt.Tx) (Stats, error) {
	wal, _, err := buckets(tx)
	if err != nil {
		return Stats{}, err
	}
	var s Stats
	c := wal.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) != indexSize {
			return s, fmt.Errorf("%w: bad walseq record", ErrCorrupt)
		}
		first, last := binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
		if s.Chunks == 0 || first < s.MinTime {
			s.MinTime = first
		}
		s.MaxTime = max(s.MaxTime, last)
		s.Entries += uint64(binary.BigEndian.Uint32(v[24:]))
		s.Bytes += int64(binary.BigEndian.Uint32(v[28:])) + 8 + int64(len(k)+len(v))
		s.Chunks++
	}
	return s, nil
}
