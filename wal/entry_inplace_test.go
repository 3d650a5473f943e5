package wal

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cdclog/cdclog/internal/lenprefix"
)

// TestBeginEndEntryEncodesEntries checks the entries BeginEntry and
// EndEntry write, chunk by chunk, against the encoding written out field
// by field: the five uvarints, then the body length-prefixed.
func TestBeginEndEntryEncodesEntries(t *testing.T) {
	var b Batch
	var entries []Entry
	var bodies [][]byte
	for i := range 3 * MaxChunkEntries / 2 {
		e := Entry{Time: uint64(1000 + i/3), Arrival: uint64(i), Source: uint64(i % 2), Line: uint64(i + 1), Offset: uint64(i * 40)}
		body := bytes.Repeat([]byte{byte(i)}, i%300) // some of 128 bytes or more
		b.EndEntry(append(b.BeginEntry(e), body...))
		entries, bodies = append(entries, e), append(bodies, body)
	}
	k := 0
	for i := range b.chunks[:b.used] {
		c := &b.chunks[i]
		want := []byte(nil)
		for range c.count {
			e := entries[k]
			want = binary.AppendUvarint(want, zigzag(int64(e.Time-c.baseTime)))
			want = binary.AppendUvarint(want, zigzag(int64(e.Arrival-c.baseArrival)))
			want = binary.AppendUvarint(want, e.Source)
			want = binary.AppendUvarint(want, e.Line)
			want = binary.AppendUvarint(want, e.Offset)
			want = lenprefix.Append(want, func(dst []byte) []byte { return append(dst, bodies[k]...) })
			k++
		}
		if !bytes.Equal(c.buf[headerRoom:], want) {
			t.Fatalf("chunk %d: %d bytes of entries, want %d", i, len(c.buf)-headerRoom, len(want))
		}
	}
	if k != len(entries) {
		t.Fatalf("%d entries in the chunks, want %d", k, len(entries))
	}
}
