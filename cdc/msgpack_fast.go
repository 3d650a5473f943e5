package cdc

import (
	"bytes"
	"encoding/binary"
)

// The msgpack fast path: the exact byte shapes AppendMsgpack writes for an
// update with plain ASCII string data and for a bounded progress statement,
// decoded without the general decoder's bookkeeping. Anything else (other
// key orders, other data, a value to reject, a truncated message) returns
// false and goes to the general decoder, which has the last word; a fuzz
// test checks that the two agree.

var (
	mpUpdatePrefix   = []byte("\x81\xa6update\x83\xa4data")
	mpTimeKey        = []byte("\xa4time")
	mpDiffKey        = []byte("\xa4diff")
	mpProgressPrefix = []byte("\x81\xa8progress\x83\xa5lower")
	mpUpperKey       = []byte("\xa5upper")
	mpCountsKey      = []byte("\xa6counts")
	mpCountKey       = []byte("\xa5count")
)

// fastMsgpack decodes b's first message into m when it has one of the fast
// shapes; data is built in slab when not nil.
func fastMsgpack(b []byte, m *Message, slab *[]byte, counts *[]Count) (int, bool) {
	switch {
	case bytes.HasPrefix(b, mpUpdatePrefix):
		return fastMpUpdate(b, len(mpUpdatePrefix), m, slab)
	case bytes.HasPrefix(b, mpProgressPrefix):
		return fastMpProgress(b, len(mpProgressPrefix), m, counts)
	}
	return 0, false
}

func fastMpUpdate(b []byte, i int, m *Message, slab *[]byte) (int, bool) {
	s, i, ok := fastMpPlainStr(b, i)
	if !ok {
		return 0, false
	}
	t, i, ok := fastMpKeyUint(b, i, mpTimeKey)
	if !ok || !bytes.HasPrefix(b[i:], mpDiffKey) {
		return 0, false
	}
	diff, i, ok := fastMpInt(b, i+len(mpDiffKey))
	if !ok || diff == 0 {
		return 0, false
	}
	d := mpDecoder{slab: slab}
	buf := d.dataBuf(len(s) + 2)
	buf = append(append(append(buf, '"'), s...), '"')
	*m = Message{Kind: KindUpdate, Update: Update{Data: d.kept(buf), Time: t, Diff: diff}}
	return i, true
}

func fastMpProgress(b []byte, i int, m *Message, slab *[]Count) (int, bool) {
	lower, i, ok := fastMpUint(b, i)
	if !ok {
		return 0, false
	}
	upper, i, ok := fastMpKeyUint(b, i, mpUpperKey)
	if !ok || upper <= lower || !bytes.HasPrefix(b[i:], mpCountsKey) {
		return 0, false
	}
	i += len(mpCountsKey)
	if i >= len(b) || b[i]&0xf0 != 0x90 {
		return 0, false
	}
	n := int(b[i] & 0x0f)
	i++
	var buf [15]Count // a fixarray holds at most 15
	counts := buf[:n]
	for k := range counts {
		if i >= len(b) || b[i] != 0x82 {
			return 0, false
		}
		var c Count
		if c.Time, i, ok = fastMpKeyUint(b, i+1, mpTimeKey); !ok {
			return 0, false
		}
		if c.Count, i, ok = fastMpKeyUint(b, i, mpCountKey); !ok {
			return 0, false
		}
		if c.Count == 0 || c.Time < lower || c.Time >= upper || (k > 0 && counts[k-1].Time >= c.Time) {
			return 0, false
		}
		counts[k] = c
	}
	var kept []Count
	if n > 0 {
		kept = keepCounts(counts, slab)
	}
	*m = Message{Kind: KindProgress, Progress: Progress{Lower: lower, Upper: upper, Counts: kept}}
	return i, true
}

// fastMpPlainStr reads a fixstr or str8 of printable ASCII without '"'
// or '\\': its JSON encoding is itself in quotes.
func fastMpPlainStr(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) {
		return nil, 0, false
	}
	var n int
	switch c := b[i]; {
	case c >= 0xa0 && c <= 0xbf:
		n, i = int(c&0x1f), i+1
	case c == 0xd9 && i+1 < len(b):
		n, i = int(b[i+1]), i+2
	default:
		return nil, 0, false
	}
	if i+n > len(b) {
		return nil, 0, false
	}
	s := b[i : i+n]
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return nil, 0, false
		}
	}
	return s, i + n, true
}

// fastMpKeyUint reads key, then an unsigned integer.
func fastMpKeyUint(b []byte, i int, key []byte) (uint64, int, bool) {
	if !bytes.HasPrefix(b[i:], key) {
		return 0, 0, false
	}
	return fastMpUint(b, i+len(key))
}

// fastMpUint reads a positive fixint or a uint8 to uint64.
func fastMpUint(b []byte, i int) (uint64, int, bool) {
	if i >= len(b) {
		return 0, 0, false
	}
	c := b[i]
	if c <= 0x7f {
		return uint64(c), i + 1, true
	}
	size := 0
	switch c {
	case 0xcc:
		size = 1
	case 0xcd:
		size = 2
	case 0xce:
		size = 4
	case 0xcf:
		size = 8
	default:
		return 0, 0, false
	}
	if i+1+size > len(b) {
		return 0, 0, false
	}
	return beUint(b[i+1 : i+1+size]), i + 1 + size, true
}

// fastMpInt reads an integer that fits an int64.
func fastMpInt(b []byte, i int) (int64, int, bool) {
	if i >= len(b) {
		return 0, 0, false
	}
	c := b[i]
	if c >= 0xe0 {
		return int64(int8(c)), i + 1, true
	}
	size := 0
	switch c {
	case 0xd0:
		size = 1
	case 0xd1:
		size = 2
	case 0xd2:
		size = 4
	case 0xd3:
		size = 8
	default:
		v, j, ok := fastMpUint(b, i)
		if !ok || v > 1<<63-1 {
			return 0, 0, false
		}
		return int64(v), j, true
	}
	if i+1+size > len(b) {
		return 0, 0, false
	}
	v := beUint(b[i+1 : i+1+size])
	shift := 64 - 8*size
	return int64(v<<shift) >> shift, i + 1 + size, true
}

func beUint(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}
