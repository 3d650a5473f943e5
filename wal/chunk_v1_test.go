package wal

import "encoding/binary"

// appendChunkV1 encodes entries, whose smallest time is first, as one
// chunk of version 1, as cdclog wrote them before version 2: databases
// written then must still read.
func appendChunkV1(dst []byte, batch, first uint64, entries []Entry) []byte {
	minArrival := entries[0].Arrival
	for i := range entries {
		minArrival = min(minArrival, entries[i].Arrival)
	}
	dst = append(dst, chunkV1)
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
