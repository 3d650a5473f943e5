package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
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
// count's width so that the header can be written last.
const (
	chunkV1 = 1
	chunkV2 = 2
)

// ErrCorrupt is wrapped by errors about undecodable log data.
var ErrCorrupt = errors.New("corrupt write-ahead log")

// chunkReader decodes a chunk entry by entry.
type chunkReader struct {
	b       []byte
	version byte
	batch   uint64
	left    uint64
	// baseTime and baseArrival are what entries' offsets count from.
	baseTime, baseArrival uint64
}

func newChunkReader(b []byte) (chunkReader, error) {
	r := chunkReader{}
	if len(b) == 0 || (b[0] != chunkV1 && b[0] != chunkV2) {
		return r, fmt.Errorf("%w: unknown chunk version", ErrCorrupt)
	}
	r.version, r.b = b[0], b[1:]
	ok := r.uvarint(&r.batch)
	if r.version == chunkV1 {
		ok = ok && r.uvarint(&r.left)
	} else if ok = ok && len(r.b) >= 2; ok {
		r.left, r.b = uint64(binary.BigEndian.Uint16(r.b)), r.b[2:]
	}
	if !ok || !r.uvarint(&r.baseTime) || !r.uvarint(&r.baseArrival) {
		return r, fmt.Errorf("%w: truncated chunk header", ErrCorrupt)
	}
	return r, nil
}

func (r *chunkReader) uvarint(p *uint64) bool {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		return false
	}
	*p, r.b = v, r.b[n:]
	return true
}

// next decodes the next entry into e; it returns false at the end.
func (r *chunkReader) next(e *Entry) (bool, error) {
	if r.left == 0 {
		return false, nil
	}
	r.left--
	var dt, da, size uint64
	for _, p := range []*uint64{&dt, &da, &e.Source, &e.Line, &e.Offset, &size} {
		if !r.uvarint(p) {
			return false, fmt.Errorf("%w: truncated entry", ErrCorrupt)
		}
	}
	if size > uint64(len(r.b)) {
		return false, fmt.Errorf("%w: entry body overruns its chunk", ErrCorrupt)
	}
	if r.version == chunkV2 {
		dt, da = uint64(unzigzag(dt)), uint64(unzigzag(da))
	}
	// Offsets wrap around, as they were taken: any time or arrival
	// number comes back exactly.
	e.Time, e.Arrival = r.baseTime+dt, r.baseArrival+da
	e.Body, r.b = r.b[:size:size], r.b[size:]
	return true, nil
}

// zigzag maps a signed offset to an unsigned one that is small when the
// offset is small either way.
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
