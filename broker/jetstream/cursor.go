package jetstream

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Cursor is a JetStream source's committed position: the stream's
// creation time (Unix nanoseconds), which tells a re-created stream from
// the one read, and the next stream sequence to read.
type Cursor struct {
	Created int64
	Next    uint64
}

// cursorVersion is the first byte of an encoded cursor. Layout: version,
// varint creation time, uvarint next sequence.
const cursorVersion = 1

var errCursor = errors.New("jetstream: malformed cursor")

// Encode returns the cursor's bytes.
func (c Cursor) Encode() []byte {
	b := []byte{cursorVersion}
	b = binary.AppendVarint(b, c.Created)
	return binary.AppendUvarint(b, c.Next)
}

// DecodeCursor decodes a cursor that Encode wrote.
func DecodeCursor(b []byte) (Cursor, error) {
	var c Cursor
	if len(b) < 3 || b[0] != cursorVersion {
		return c, fmt.Errorf("%w: version or length", errCursor)
	}
	created, w1 := binary.Varint(b[1:])
	if w1 <= 0 {
		return c, fmt.Errorf("%w: creation time", errCursor)
	}
	next, w2 := binary.Uvarint(b[1+w1:])
	if w2 <= 0 || 1+w1+w2 != len(b) || next == 0 {
		return c, fmt.Errorf("%w: sequence", errCursor)
	}
	return Cursor{Created: created, Next: next}, nil
}
