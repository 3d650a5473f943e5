package wal

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// CheckStats counts what Check read.
type CheckStats struct {
	// Chunks and Indexed are the records of the walseq and wal buckets.
	Chunks, Indexed int
	// Entries is the number of entries in the chunks that decoded.
	Entries uint64
	// Legacy and LegacyIndex are the numbers of chunks and index records
	// without a checksum (written before schema 2), read unverified.
	Legacy, LegacyIndex int
}

// Check reads the whole log, as 'cdclog check' does: every index record
// and every chunk, each verified against its checksum and decoded, each
// chunk against its index record (size, batch, entry count, times), and
// every chunk indexed exactly once. fn gets each entry, to check its body;
// an error it returns is a problem of the entry's chunk. Each problem goes
// to problem, and the check goes on with the next record.
func (l Log) Check(tx *bolt.Tx, fn func(*Entry) error, problem func(*store.CorruptError)) CheckStats {
	var st CheckStats
	report := func(err error) {
		if ce, ok := err.(*store.CorruptError); ok {
			problem(ce)
		} else {
			problem(&store.CorruptError{Bucket: string(bucketSeq), Reason: err.Error(), Err: ErrCorrupt})
		}
	}
	wal, seq, err := buckets(tx)
	if err != nil {
		report(err)
		return st
	}
	type indexed struct {
		key []byte
		x   index
	}
	byChunk := make(map[uint64]indexed)
	c := wal.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		st.Indexed++
		x, err := l.readIndex(k, v)
		if err != nil {
			report(err)
			continue
		}
		if len(v) == indexFields {
			st.LegacyIndex++
		}
		n := binary.BigEndian.Uint64(k[8:])
		if other, dup := byChunk[n]; dup {
			report(corrupt(bucketWAL, k, fmt.Sprintf("indexes chunk %d, which key %s indexes too", n, store.FormatKey(other.key))))
			continue
		}
		byChunk[n] = indexed{append([]byte(nil), k...), x}
	}
	c = seq.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		st.Chunks++
		if len(k) != 8 {
			report(corrupt(bucketSeq, k, "chunk key is not 8 bytes"))
			continue
		}
		var x *index
		if ix, ok := byChunk[binary.BigEndian.Uint64(k)]; ok {
			x = &ix.x
			delete(byChunk, binary.BigEndian.Uint64(k))
		} else {
			report(corrupt(bucketSeq, k, "chunk not in the index (bucket wal)"))
		}
		var n uint64
		err := l.eachEntry(k, v, x, func(e *Entry) error {
			n++
			if err := fn(e); err != nil {
				return corrupt(bucketSeq, k, fmt.Sprintf("entry %d: %v", e.Arrival, err))
			}
			return nil
		})
		if err != nil {
			report(err)
			continue
		}
		st.Entries += n
		if v[0] != chunkV3 {
			st.Legacy++
		}
	}
	missing := slices.Sorted(maps.Keys(byChunk))
	for _, n := range missing {
		report(corrupt(bucketWAL, byChunk[n].key, fmt.Sprintf("indexes chunk %d, which is missing", n)))
	}
	return st
}
