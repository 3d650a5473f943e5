package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/store"
)

// Limits of one chunk (one bbolt value).
const (
	MaxChunkEntries = 1024
	MaxChunkBytes   = 32 << 10
)

// Chunk versions. Version 1 (still read) filed each entry's time and
// arrival as offsets from the chunk's smallest ones, so a chunk could only
// be encoded once all its entries were known; version 2 files them as
// signed offsets from its first entry's, so that a batch encodes each
// entry into its chunk as it is added (see Batch), and fixes the entry
// count's width so that the header can be written last. Version 3, the
// one written, is version 2 with a CRC-32C of the chunk's key and of the
// rest of the chunk after the version byte (see the package
// documentation); versions 1 and 2 were written before checksums, and
// are read only where the Log allows (Log.LegacyBelow).
const (
	chunkV1 = 1
	chunkV2 = 2
	chunkV3 = 3
)

// ErrCorrupt is wrapped, with store.ErrCorrupt, by the *store.CorruptError
// that reports damaged log data.
var ErrCorrupt = errors.New("corrupt write-ahead log")

// corrupt returns the error for a damaged record of the log. It copies the
// key, which may be the database's memory, valid only in its transaction.
func corrupt(bucket []byte, key []byte, reason string) error {
	return &store.CorruptError{Bucket: string(bucket), Key: bytes.Clone(key), Reason: reason, Err: ErrCorrupt}
}

// chunkReader decodes a chunk entry by entry.
type chunkReader struct {
	b       []byte
	version byte
	batch   uint64
	left    uint64
	// baseTime and baseArrival are what entries' offsets count from.
	baseTime, baseArrival uint64
}

// openChunk verifies the chunk b stored under key k and returns a reader
// of its entries. A chunk without a checksum (version 1 or 2) is accepted
// only when legacy is set. Errors are reasons, for corrupt to wrap.
func openChunk(k, b []byte, legacy bool) (chunkReader, string) {
	r := chunkReader{}
	if len(b) == 0 {
		return r, "empty chunk"
	}
	switch r.version, r.b = b[0], b[1:]; r.version {
	case chunkV3:
		if len(r.b) < checksum.Size {
			return r, "truncated chunk header"
		}
		if err := checksum.Verify(binary.BigEndian.Uint32(r.b), k, r.b[checksum.Size:]); err != nil {
			return r, err.Error()
		}
		r.b = r.b[checksum.Size:]
	case chunkV1, chunkV2:
		if !legacy {
			return r, fmt.Sprintf("chunk of version %d, without a checksum, where only version %d is written", r.version, chunkV3)
		}
	default:
		return r, fmt.Sprintf("unknown chunk version %d", r.version)
	}
	ok := r.uvarint(&r.batch)
	if r.version == chunkV1 {
		ok = ok && r.uvarint(&r.left)
	} else if ok = ok && len(r.b) >= 2; ok {
		r.left, r.b = uint64(binary.BigEndian.Uint16(r.b)), r.b[2:]
	}
	if !ok || !r.uvarint(&r.baseTime) || !r.uvarint(&r.baseArrival) {
		return r, "truncated chunk header"
	}
	return r, ""
}

func (r *chunkReader) uvarint(p *uint64) bool {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		return false
	}
	*p, r.b = v, r.b[n:]
	return true
}

// next decodes the next entry into e; it returns false at the end, and a
// reason when the chunk is malformed.
func (r *chunkReader) next(e *Entry) (bool, string) {
	if r.left == 0 {
		if len(r.b) > 0 {
			return false, fmt.Sprintf("%d bytes after the last entry", len(r.b))
		}
		return false, ""
	}
	r.left--
	var dt, da, size uint64
	for _, p := range []*uint64{&dt, &da, &e.Source, &e.Line, &e.Offset, &size} {
		if !r.uvarint(p) {
			return false, "truncated entry"
		}
	}
	if size > uint64(len(r.b)) {
		return false, "entry body overruns its chunk"
	}
	if r.version != chunkV1 {
		dt, da = uint64(unzigzag(dt)), uint64(unzigzag(da))
	}
	// Offsets wrap around, as they were taken: any time or arrival
	// number comes back exactly.
	e.Time, e.Arrival = r.baseTime+dt, r.baseArrival+da
	e.Body, r.b = r.b[:size:size], r.b[size:]
	return true, ""
}

// zigzag maps a signed offset to an unsigned one that is small when the
// offset is small either way.
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
