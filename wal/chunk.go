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

const chunkVersion = 1

// ErrCorrupt is wrapped by errors about undecodable log data.
var ErrCorrupt = errors.New("corrupt write-ahead log")

// appendChunk encodes entries, whose smallest time is first, as one chunk.
func appendChunk(dst []byte, batch, first uint64, entries []Entry) []byte {
	minArrival := entries[0].Arrival
	for i := range entries {
		minArrival = min(minArrival, entries[i].Arrival)
	}
	dst = append(dst, chunkVersion)
	dst = binary.AppendUvarint(dst, batch)
	dst = binary.AppendUvarint(dst, uint64(len(entries)))
	dst = binary.AppendUvarint(dst, first)
	dst = binary.AppendUvarint(dst, minArrival)
	for i := range entries {
		e := &entries[i]
		dst = binary.AppendUvarint(dst, e.Time-first)
		dst = binary.AppendUvarint(dst, e.Arrival-minArrival)
		dst = binary.AppendUvarint(dst, e.Source)
		dst = binary.AppendUvarint(dst, e.Line)
		dst = binary.AppendUvarint(dst, e.Offset)
		dst = binary.AppendUvarint(dst, uint64(len(e.Body)))
		dst = append(dst, e.Body...)
	}
	return dst
}

// chunkReader decodes a chunk entry by entry.
type chunkReader struct {
	b          []byte
	batch      uint64
	left       uint64
	first      uint64
	minArrival uint64
}

func newChunkReader(b []byte) (chunkReader, error) {
	r := chunkReader{}
	if len(b) == 0 || b[0] != chunkVersion {
		return r, fmt.Errorf("%w: unknown chunk version", ErrCorrupt)
	}
	r.b = b[1:]
	for _, p := range []*uint64{&r.batch, &r.left, &r.first, &r.minArrival} {
		if !r.uvarint(p) {
			return r, fmt.Errorf("%w: truncated chunk header", ErrCorrupt)
		}
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
	e.Time, e.Arrival = r.first+dt, r.minArrival+da
	e.Body, r.b = r.b[:size:size], r.b[size:]
	return true, nil
}
