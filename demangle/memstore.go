package demangle

import (
	"cmp"
	"encoding/binary"
	"iter"
	"slices"

	"github.com/cdclog/cdclog/cdc"
)

// MemStore is a Store in memory, for cdclog demangle and tests: the
// messages are encoded one after another into chunks of about 32 KiB
// (about 30 bytes a message besides its data, against several times that
// for what the receiver holds in memory), and a chunk is freed once every
// message in it has been delivered. The zero value is an empty store.
type MemStore struct {
	// chunks holds the full chunks with messages left, by the smallest
	// From among them; cur is the chunk being filled.
	chunks keyHeap[*memChunk]
	cur    *memChunk
	nextID uint64
	names  []string
	ids    map[string]uint64
	bytes  int64
	held   int64
	counts []cdc.Count
	refs   []memRef
	picked []*memChunk
}

// memChunk is a run of encoded messages: per message a flag byte (set
// once delivered), the length of the rest, then From, the last time, Seq,
// the message and its position.
type memChunk struct {
	id   uint64
	buf  []byte
	left int    // messages not delivered
	key  uint64 // the smallest From among them
}

// memRef is a message of a chunk picked for delivery.
type memRef struct {
	seq uint64
	c   *memChunk
	off int
}

// memChunkSize is the size beyond which a chunk is closed.
const memChunkSize = 32 << 10

// Len returns the number of messages kept and not delivered yet.
func (s *MemStore) Len() int64 { return s.held }

// Bytes returns the memory the kept messages' chunks take.
func (s *MemStore) Bytes() int64 { return s.bytes }

// Hold keeps a copy of h.
func (s *MemStore) Hold(h *Held) error {
	c := s.cur
	if c == nil || len(c.buf) >= memChunkSize {
		if c != nil {
			s.chunks.Push(c.key, c)
		}
		c = &memChunk{id: s.nextID, buf: make([]byte, 0, memChunkSize+memChunkSize/4)}
		s.nextID++
		s.bytes += int64(cap(c.buf))
		s.cur = c
	}
	if c.left == 0 || h.From < c.key {
		c.key = h.From
	}
	start := len(c.buf)
	c.buf = append(c.buf, 0, 0, 0, 0, 0) // the flag, then room for the length
	body := len(c.buf)
	c.buf = binary.AppendUvarint(c.buf, h.From)
	c.buf = binary.AppendUvarint(c.buf, h.Msg.Time())
	c.buf = binary.AppendUvarint(c.buf, h.Seq)
	c.buf = appendHeldMsg(c.buf, &h.Msg)
	c.buf = binary.AppendUvarint(c.buf, s.nameID(h.At.Source))
	c.buf = binary.AppendVarint(c.buf, h.At.Line)
	c.buf = binary.AppendVarint(c.buf, h.At.Offset)
	// The length takes four bytes of uvarint, enough for any message
	// (they are at most cdc.MaxMessageSize long, below 2^28).
	n := len(c.buf) - body
	c.buf[start+1] = byte(n) | 0x80
	c.buf[start+2] = byte(n>>7) | 0x80
	c.buf[start+3] = byte(n>>14) | 0x80
	c.buf[start+4] = byte(n >> 21)
	if cap(c.buf) > memChunkSize+memChunkSize/4 {
		s.bytes += int64(cap(c.buf)) // a message larger than a chunk
	}
	c.left++
	s.held++
	return nil
}

func (s *MemStore) nameID(name string) uint64 {
	if id, ok := s.ids[name]; ok {
		return id
	}
	if s.ids == nil {
		s.ids = map[string]uint64{}
	}
	s.ids[name] = uint64(len(s.names))
	s.names = append(s.names, name)
	return uint64(len(s.names) - 1)
}

// Shed keeps what the receiver dropped, to deliver it again.
func (s *MemStore) Shed(_ uint64, spilled iter.Seq[*Held]) error {
	for h := range spilled {
		if err := s.Hold(h); err != nil {
			return err
		}
	}
	return nil
}

// Load delivers the messages in the window [lo, last] (see Store).
func (s *MemStore) Load(lo, last uint64, fn func(*Held) error) (uint64, bool, error) {
	s.picked = s.picked[:0]
	for s.chunks.Len() > 0 && s.chunks.TopKey() <= last {
		s.picked = append(s.picked, s.chunks.items[0].val)
		s.chunks.Pop()
	}
	if c := s.cur; c != nil && c.left > 0 && c.key <= last {
		s.picked = append(s.picked, c)
	}
	s.refs = s.refs[:0]
	for _, c := range s.picked {
		s.pick(c, lo, last)
	}
	slices.SortStableFunc(s.refs, func(a, b memRef) int {
		return cmp.Compare(a.seq, b.seq)
	})
	var h Held
	var err error
	for _, ref := range s.refs {
		if err == nil {
			s.decode(ref.c.buf[ref.off:], &h)
			err = fn(&h)
		}
		ref.c.buf[ref.off] = 1
		ref.c.left--
		s.held--
	}
	for _, c := range s.picked {
		switch {
		case c.left == 0 && c == s.cur:
			c.buf, c.key = c.buf[:0], 0
		case c.left == 0:
			s.bytes -= int64(cap(c.buf))
			c.buf = nil
		case c != s.cur:
			s.chunks.Push(c.key, c)
		}
	}
	next, more := uint64(0), false
	if s.chunks.Len() > 0 {
		next, more = s.chunks.TopKey(), true
	}
	if c := s.cur; c != nil && c.left > 0 && (!more || c.key < next) {
		next, more = c.key, true
	}
	return next, more, err
}

// pick adds to s.refs the undelivered messages of c in the window,
// marks those wholly below it as delivered (they are stale), and sets
// c.key to the smallest From among the rest.
func (s *MemStore) pick(c *memChunk, lo, last uint64) {
	key, any := uint64(0), false
	for off := 0; off < len(c.buf); {
		delivered := c.buf[off] != 0
		n, k := binary.Uvarint(c.buf[off+1:])
		body := off + 1 + k
		next := body + int(n)
		if !delivered {
			from, k1 := binary.Uvarint(c.buf[body:])
			end, k2 := binary.Uvarint(c.buf[body+k1:])
			seq, _ := binary.Uvarint(c.buf[body+k1+k2:])
			switch {
			case end < lo:
				c.buf[off] = 1
				c.left--
				s.held--
			case from <= last:
				s.refs = append(s.refs, memRef{seq: seq, c: c, off: off})
			case !any || from < key:
				key, any = from, true
			}
		}
		off = next
	}
	c.key = key
}

// decode reads the message at the start of b (its flag byte first).
func (s *MemStore) decode(b []byte, h *Held) {
	_, k := binary.Uvarint(b[1:])
	b = b[1+k:]
	var end uint64
	b = readUvarint(b, &h.From)
	b = readUvarint(b, &end)
	b = readUvarint(b, &h.Seq)
	b = s.readHeldMsg(b, end, &h.Msg)
	var src uint64
	b = readUvarint(b, &src)
	h.At = cdc.Pos{}
	if src < uint64(len(s.names)) {
		h.At.Source = s.names[src]
	}
	b = readVarint(b, &h.At.Line)
	readVarint(b, &h.At.Offset)
}

// appendHeldMsg encodes m: its kind, then for an update the data and the
// diff (the time is the message's last time, stored before it), for a
// statement its lower bound, its upper bound (0 when unbounded: a
// bounded one is above its lower bound) and its counts, each time as the
// distance from the one before.
func appendHeldMsg(b []byte, m *cdc.Message) []byte {
	b = append(b, byte(m.Kind))
	if m.Kind == cdc.KindUpdate {
		b = binary.AppendUvarint(b, uint64(len(m.Update.Data)))
		b = append(b, m.Update.Data...)
		return binary.AppendVarint(b, m.Update.Diff)
	}
	p := &m.Progress
	b = binary.AppendUvarint(b, p.Lower)
	if p.Unbounded {
		b = binary.AppendUvarint(b, 0)
	} else {
		b = binary.AppendUvarint(b, p.Upper)
	}
	b = binary.AppendUvarint(b, uint64(len(p.Counts)))
	prev := p.Lower
	for _, c := range p.Counts {
		b = binary.AppendUvarint(b, c.Time-prev)
		b = binary.AppendUvarint(b, c.Count)
		prev = c.Time
	}
	return b
}

// readHeldMsg decodes what appendHeldMsg wrote, end being the message's
// last time. Data and counts alias b and the store's scratch space.
func (s *MemStore) readHeldMsg(b []byte, end uint64, m *cdc.Message) []byte {
	kind := cdc.Kind(b[0])
	b = b[1:]
	*m = cdc.Message{Kind: kind}
	if kind == cdc.KindUpdate {
		var n uint64
		b = readUvarint(b, &n)
		m.Update.Data, b = b[:n:n], b[n:]
		m.Update.Time = end
		return readVarint(b, &m.Update.Diff)
	}
	p := &m.Progress
	var n uint64
	b = readUvarint(b, &p.Lower)
	b = readUvarint(b, &p.Upper)
	p.Unbounded = p.Upper == 0
	b = readUvarint(b, &n)
	s.counts = s.counts[:0]
	prev := p.Lower
	for range n {
		var dt, c uint64
		b = readUvarint(b, &dt)
		b = readUvarint(b, &c)
		prev += dt
		s.counts = append(s.counts, cdc.Count{Time: prev, Count: c})
	}
	if n > 0 {
		p.Counts = s.counts
	}
	return b
}

func readUvarint(b []byte, v *uint64) []byte {
	x, n := binary.Uvarint(b)
	*v = x
	return b[n:]
}

func readVarint(b []byte, v *int64) []byte {
	x, n := binary.Varint(b)
	*v = x
	return b[n:]
}
