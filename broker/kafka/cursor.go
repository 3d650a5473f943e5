package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Cursor is a Kafka source's committed position: the topic's id (all
// zero when the brokers do not report one) and, for each partition read
// from, the next offset to read and the leader epoch of the last record
// read (-1 when unknown).
type Cursor struct {
	TopicID    [16]byte
	Partitions map[int32]Position
}

// Position is where a partition's reading resumes.
type Position struct {
	Offset int64
	Epoch  int32
}

// cursorVersion is the first byte of an encoded cursor. Layout: version,
// 16 bytes of topic id, uvarint partition count, then per partition, in
// ascending order: uvarint partition, uvarint next offset, varint epoch.
const cursorVersion = 1

// errCursor wraps every cursor decoding error.
var errCursor = errors.New("kafka: malformed cursor")

// Encode returns the cursor's bytes.
func (c *Cursor) Encode() []byte {
	b := append(make([]byte, 0, 17+len(c.Partitions)*12), cursorVersion)
	b = append(b, c.TopicID[:]...)
	b = binary.AppendUvarint(b, uint64(len(c.Partitions)))
	for _, p := range slices.Sorted(maps.Keys(c.Partitions)) {
		pos := c.Partitions[p]
		b = binary.AppendUvarint(b, uint64(p))
		b = binary.AppendUvarint(b, uint64(pos.Offset))
		b = binary.AppendVarint(b, int64(pos.Epoch))
	}
	return b
}

// DecodeCursor decodes a cursor that Encode wrote.
func DecodeCursor(b []byte) (Cursor, error) {
	c := Cursor{Partitions: map[int32]Position{}}
	if len(b) < 17 || b[0] != cursorVersion {
		return c, fmt.Errorf("%w: version or length", errCursor)
	}
	copy(c.TopicID[:], b[1:17])
	b = b[17:]
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)) {
		return c, fmt.Errorf("%w: partition count", errCursor)
	}
	b = b[w:]
	for range n {
		p, w1 := binary.Uvarint(b)
		if w1 <= 0 || p > 1<<31-1 {
			return c, fmt.Errorf("%w: partition", errCursor)
		}
		off, w2 := binary.Uvarint(b[w1:])
		if w2 <= 0 || off > 1<<63-1 {
			return c, fmt.Errorf("%w: offset", errCursor)
		}
		ep, w3 := binary.Varint(b[w1+w2:])
		if w3 <= 0 || ep < -1 || ep > 1<<31-1 {
			return c, fmt.Errorf("%w: epoch", errCursor)
		}
		c.Partitions[int32(p)] = Position{Offset: int64(off), Epoch: int32(ep)}
		b = b[w1+w2+w3:]
	}
	if len(b) != 0 {
		return c, fmt.Errorf("%w: %d trailing bytes", errCursor, len(b))
	}
	return c, nil
}
