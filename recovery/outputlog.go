package recovery

import (
	"encoding/binary"
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/internal/lenprefix"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// The output log: key = sequence number of the chunk's first record (8
// bytes BE); value = CRC-32C (4 bytes BE) of the key and of the rest of the
// value, then uvarint record count, then per record uvarint length and the
// record in cdc's binary encoding. (A schema 1 database's chunks, below
// its layout's outputFrom, have no checksum.) The chunks follow one
// another: each starts at the record after the previous one's last. A
// batch's records are cut into chunks of at most outputChunkBytes, so a
// batch costs a few keys, and no value is big: bbolt rewrites the leaf it
// appends to, values included, so one big value per batch was copied
// again by the next commit.
const outputChunkBytes = 32 << 10

// Record is one message of the clean output stream and its sequence
// number (the first record is 1).
type Record struct {
	Seq uint64
	Msg cdc.Message
}

// outputChunk is one value of the output log being built. Its body starts
// with room for the checksum and the record count, so that the value is a
// slice of it.
type outputChunk struct {
	first uint64
	n     int
	body  []byte
}

// countRoom is the room kept at the start of a chunk's body for its
// checksum and count.
const countRoom = checksum.Size + binary.MaxVarintLen64

func (c *outputChunk) reset(first uint64) {
	c.first, c.n = first, 0
	c.body = append(c.body[:0], make([]byte, countRoom)...)
}

// add appends m, length-prefixed, encoded in place: as lenprefix.Append
// does, without calling AppendBinary through a function value.
func (c *outputChunk) add(m *cdc.Message) {
	at := len(c.body)
	c.body = cdc.AppendBinary(append(c.body, 0), m)
	if n := len(c.body) - at - 1; n < 0x80 {
		c.body[at] = byte(n)
	} else {
		c.body = lenprefix.Widen(c.body, at)
	}
	c.n++
}

// value returns the chunk's bbolt value, under key: the checksum, the
// record count, then the records. It aliases the body.
func (c *outputChunk) value(key []byte) []byte {
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(c.n))
	start := countRoom - h - checksum.Size
	copy(c.body[start+checksum.Size:], hdr[:h])
	v := c.body[start:]
	binary.BigEndian.PutUint32(v, checksum.Of(key, v[checksum.Size:]))
	return v
}

// outputRecords accumulates a batch's output records, numbered from
// first, in chunks. The zero value is empty; reset reuses its buffers.
type outputRecords struct {
	chunks []outputChunk
	used   int
}

// size returns the bytes the records' buffers hold.
func (o *outputRecords) size() int {
	n := 0
	for i := range o.chunks {
		n += cap(o.chunks[i].body)
	}
	return n
}

func (o *outputRecords) reset(first uint64) {
	if len(o.chunks) == 0 {
		o.chunks = append(o.chunks, outputChunk{})
	}
	o.chunks[0].reset(first)
	o.used = 1
}

func (o *outputRecords) add(m *cdc.Message) {
	c := &o.chunks[o.used-1]
	if len(c.body) >= outputChunkBytes {
		next := c.first + uint64(c.n)
		if o.used == len(o.chunks) {
			o.chunks = append(o.chunks, outputChunk{})
		}
		o.used++
		c = &o.chunks[o.used-1]
		c.reset(next)
	}
	c.add(m)
}

// count returns the number of records added since reset.
func (o *outputRecords) count() int {
	n := 0
	for _, c := range o.chunks[:o.used] {
		n += c.n
	}
	return n
}

func writeOutput(tx *bolt.Tx, o *outputRecords) error {
	b := tx.Bucket(store.BucketOutput)
	b.FillPercent = 1.0 // strictly ascending keys
	for i := range o.chunks[:o.used] {
		c := &o.chunks[i]
		if c.n == 0 {
			continue
		}
		k := binary.BigEndian.AppendUint64(nil, c.first)
		if err := b.Put(k, c.value(k)); err != nil {
			return fmt.Errorf("write output log: %w", err)
		}
	}
	return nil
}

// scanOutput calls fn for each record with sequence number >= from, in
// order, until fn returns false or an error. Records alias the database:
// valid only inside tx.
func scanOutput(tx *bolt.Tx, from uint64, fn func(seq uint64, m *cdc.Message) (bool, error)) error {
	it, err := newOutputIter(tx, from)
	if err != nil {
		return err
	}
	for {
		seq, m, ok, err := it.next()
		if err != nil || !ok {
			return err
		}
		if more, err := fn(seq, m); err != nil || !more {
			return err
		}
	}
}

// cloneMessage copies m's data out of the database's memory.
func cloneMessage(m *cdc.Message) cdc.Message {
	c := *m
	if m.Kind == cdc.KindUpdate {
		c.Update.Data = append([]byte(nil), m.Update.Data...)
	}
	if len(m.Progress.Counts) > 0 {
		c.Progress.Counts = append([]cdc.Count(nil), m.Progress.Counts...)
	}
	return c
}

// outputIter walks the output log record by record inside one
// transaction, verifying each chunk as it enters it: its checksum, that it
// starts where the one before ended, and that its records decode.
type outputIter struct {
	c     *bolt.Cursor
	k, v  []byte // current chunk, v positioned at its next record
	seq   uint64 // sequence number of the record at v
	left  uint64 // records left in the chunk
	from  uint64
	m     cdc.Message
	begun bool
	// checksumsFrom is the first chunk key with a checksum (layout).
	checksumsFrom uint64
}

func newOutputIter(tx *bolt.Tx, from uint64) (*outputIter, error) {
	l, err := readLayout(tx)
	if err != nil {
		return nil, err
	}
	b := tx.Bucket(store.BucketOutput)
	if b == nil {
		return nil, corruptRecord(store.BucketOutput, nil, "bucket missing")
	}
	return &outputIter{c: b.Cursor(), from: max(from, 1), checksumsFrom: l.outputFrom}, nil
}

// next returns the next record at or after from; ok is false at the end,
// and seq is then the sequence number a next record would have.
func (it *outputIter) next() (seq uint64, m *cdc.Message, ok bool, err error) {
	for {
		for it.left > 0 {
			size, w := binary.Uvarint(it.v)
			if w <= 0 || size > uint64(len(it.v)-w) {
				return it.seq, nil, false, corruptRecord(store.BucketOutput, it.k, "record %d overruns its chunk", it.seq)
			}
			rec := it.v[w : w+int(size)]
			it.v, it.left = it.v[w+int(size):], it.left-1
			seq := it.seq
			it.seq++
			if it.left == 0 && len(it.v) > 0 {
				return seq, nil, false, corruptRecord(store.BucketOutput, it.k, "%d bytes after the last record", len(it.v))
			}
			if seq < it.from {
				continue
			}
			if _, err := cdc.ParseBinary(rec, &it.m); err != nil {
				return seq, nil, false, corruptRecord(store.BucketOutput, it.k, "record %d: %v", seq, err)
			}
			return seq, &it.m, true, nil
		}
		more, err := it.advance()
		if err != nil {
			return it.seq, nil, false, err
		}
		if !more {
			return max(it.seq, it.from), nil, false, nil
		}
	}
}

// advance moves to the next chunk that may hold records at or after from
// and verifies it; it returns false at the end of the log.
func (it *outputIter) advance() (bool, error) {
	expect := it.begun // a chunk after another must start where it ended
	if !it.begun {
		it.begun = true
		it.k, it.v = it.c.Seek(binary.BigEndian.AppendUint64(nil, it.from))
		if it.k == nil || binary.BigEndian.Uint64(it.k) > it.from {
			if pk, pv := it.c.Prev(); pk != nil {
				it.k, it.v = pk, pv
			}
		}
	} else {
		it.k, it.v = it.c.Next()
	}
	if it.k == nil {
		return false, nil
	}
	v, err := unsealKeyed(store.BucketOutput, it.k, it.v, it.checksumsFrom)
	if err != nil {
		return false, err
	}
	first := binary.BigEndian.Uint64(it.k)
	switch {
	case expect && first != it.seq:
		return false, corruptRecord(store.BucketOutput, it.k, "chunk starts at record %d, the one before ends at %d", first, it.seq-1)
	case !expect && first > it.from:
		// No chunk before this one (advance took the one before from
		// when there was one): gc's retention dropped the records
		// before it. (That the first chunk is the one the checkpoint
		// says, crossCheck checks.)
		return false, &OutputDroppedError{From: it.from, First: first}
	}
	n, w := binary.Uvarint(v)
	if w <= 0 || n == 0 {
		return false, corruptRecord(store.BucketOutput, it.k, "bad record count")
	}
	it.seq, it.left, it.v = first, n, v[w:]
	return true, nil
}
