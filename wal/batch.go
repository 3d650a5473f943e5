package wal

import (
	"encoding/binary"
	"slices"

	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/internal/lenprefix"
	bolt "go.etcd.io/bbolt"
)

// Batch collects the entries of one group commit, encoding each into its
// chunk (one bbolt value) as it is added: no other copy of an entry is
// kept, and Write hands bbolt the chunks as they are. The zero value is an
// empty batch; Reset makes a written one empty again, keeping its buffers.
type Batch struct {
	chunks []chunkBuf // chunks[:used] hold the batch's entries
	used   int
	// written counts the chunks the last Write stored.
	written Stats
}

// chunkBuf is a chunk being built: room for the header (written by value,
// once the batch number and the entry count are known), then the entries.
type chunkBuf struct {
	buf                   []byte
	count                 int
	first, last           uint64 // the smallest Time - Span and the largest Time
	baseTime, baseArrival uint64 // the first entry's
	body                  int    // where the entry BeginEntry started keeps its body's length
}

// headerRoom fits the largest version 3 header: version, checksum (4
// bytes), batch (uvarint), count (2 bytes), base time and base arrival
// (uvarints).
const headerRoom = 1 + checksum.Size + binary.MaxVarintLen64 + 2 + 2*binary.MaxVarintLen64

// Add appends an entry, copying its body.
func (b *Batch) Add(e Entry) {
	b.AddFunc(e, func(dst []byte) []byte { return append(dst, e.Body...) })
}

// AddFunc appends an entry whose body appendBody appends to the slice it
// is given (e.Body is ignored): the caller encodes the body in place.
func (b *Batch) AddFunc(e Entry, appendBody func([]byte) []byte) {
	b.EndEntry(appendBody(b.BeginEntry(e)))
}

// BeginEntry starts an entry (e.Body is ignored) whose body the caller
// appends in place, without a function value: it returns the buffer to
// append the body to, and the caller hands the result to EndEntry before
// anything else is done with the batch. AddFunc is the two in one call.
func (b *Batch) BeginEntry(e Entry) []byte {
	c := b.current()
	from := e.Time - min(e.Span, e.Time)
	if c.count == 0 {
		c.baseTime, c.baseArrival, c.first, c.last = e.Time, e.Arrival, from, e.Time
	}
	c.first, c.last = min(c.first, from), max(c.last, e.Time)
	c.buf = binary.AppendUvarint(c.buf, zigzag(int64(e.Time-c.baseTime)))
	c.buf = binary.AppendUvarint(c.buf, zigzag(int64(e.Arrival-c.baseArrival)))
	c.buf = binary.AppendUvarint(c.buf, e.Source)
	c.buf = binary.AppendUvarint(c.buf, e.Line)
	c.buf = binary.AppendUvarint(c.buf, e.Offset)
	c.body = len(c.buf)
	return append(c.buf, 0) // the byte kept for the body's length (see lenprefix)
}

// EndEntry ends the entry BeginEntry started, buf being what it returned
// with the body appended.
func (b *Batch) EndEntry(buf []byte) {
	c := &b.chunks[b.used-1]
	if n := len(buf) - c.body - 1; n < 0x80 {
		buf[c.body] = byte(n)
	} else {
		buf = lenprefix.Widen(buf, c.body)
	}
	c.buf = buf
	c.count++
}

// current returns the chunk to add to, starting a new one when the last
// one holds MaxChunkEntries entries or MaxChunkBytes bytes.
func (b *Batch) current() *chunkBuf {
	if b.used > 0 {
		c := &b.chunks[b.used-1]
		if c.count < MaxChunkEntries && len(c.buf)-headerRoom < MaxChunkBytes {
			return c
		}
	}
	if b.used == len(b.chunks) {
		b.chunks = append(b.chunks, chunkBuf{})
	}
	b.used++
	c := &b.chunks[b.used-1]
	c.buf, c.count = slices.Grow(c.buf[:0], headerRoom)[:headerRoom], 0
	return c
}

// value writes the chunk's header just before its entries and returns the
// chunk's encoding, which aliases its buffer. The checksum covers the
// chunk's key (its sequence number, seq) and everything after the
// checksum: 6.3 µs for a full chunk (32 KiB) with the CPU's CRC32
// instruction, 1.5% of a group commit's WAL work (see the package
// documentation).
func (c *chunkBuf) value(batch, seq uint64) []byte {
	var hdr [headerRoom]byte
	h := append(hdr[:0], chunkV3, 0, 0, 0, 0) // the checksum is filled in below
	h = binary.AppendUvarint(h, batch)
	h = binary.BigEndian.AppendUint16(h, uint16(c.count))
	h = binary.AppendUvarint(h, c.baseTime)
	h = binary.AppendUvarint(h, c.baseArrival)
	start := headerRoom - len(h)
	copy(c.buf[start:], h)
	v := c.buf[start:]
	var key [8]byte
	binary.BigEndian.PutUint64(key[:], seq)
	binary.BigEndian.PutUint32(v[1:], checksum.Of(key[:], v[1+checksum.Size:]))
	return v
}

// Reset empties the batch for reuse once the transaction Write wrote it
// in has ended.
func (b *Batch) Reset() { b.used, b.written = 0, Stats{} }

// Written returns the statistics of the chunks the last successful Write
// stored, as ReadStats counts them: what the log's Stats gain (Plus) once
// its transaction commits. It is zero before a Write, after a Write of an
// empty batch or one that failed, and after Reset.
func (b *Batch) Written() Stats { return b.written }

// Cap returns the bytes the batch's buffers hold, written or not.
func (b *Batch) Cap() int {
	n := 0
	for i := range b.chunks {
		n += cap(b.chunks[i].buf)
	}
	return n
}

// Len returns the number of entries in the batch.
func (b *Batch) Len() int {
	n := 0
	for i := range b.chunks[:b.used] {
		n += b.chunks[i].count
	}
	return n
}

// Chunks returns what the index records of the batch's chunks say, the
// chunks numbered from nextChunk on as Write numbers them.
func (b *Batch) Chunks(nextChunk uint64) []ChunkInfo {
	out := make([]ChunkInfo, b.used)
	for i := range b.chunks[:b.used] {
		c := &b.chunks[i]
		out[i] = ChunkInfo{Seq: nextChunk + uint64(i), First: c.first, Last: c.last}
	}
	return out
}

// Write stores the batch in tx as chunks numbered from nextChunk on, and
// returns how many chunk numbers it used. The values it hands bbolt are
// the batch's buffers, untouched until Reset, as bbolt requires until the
// transaction ends.
func (b *Batch) Write(tx *bolt.Tx, batch, nextChunk uint64) (uint64, error) {
	b.written = Stats{}
	if b.used == 0 { // a chunk is started only to add an entry
		return 0, nil
	}
	wal, seq, err := buckets(tx)
	if err != nil {
		return 0, err
	}
	wal.FillPercent = 0.9 // index keys mostly ascend; a little room for late times
	seq.FillPercent = 1.0 // chunk sequence numbers strictly ascend
	var written Stats
	for i := range b.chunks[:b.used] {
		c := &b.chunks[i]
		n := nextChunk + uint64(i)
		v := c.value(batch, n)
		if err := putChunk(wal, seq, batch, n, c.first, c.last, c.count, v); err != nil {
			return uint64(i), err
		}
		x := index{first: c.first, last: c.last, batch: batch, entries: uint32(c.count), size: uint32(len(v))}
		written.add(16, indexSize, x)
	}
	b.written = written
	return uint64(b.used), nil
}
