package ordering

import (
	"bytes"
	"encoding/binary"
)

// A mergeKey is a rawKey laid out for the merge's comparisons, which with
// 16 shards were a third of the merging goroutine's time when they went
// through bytes.Compare: the sequence number's first 32 digits are packed
// four bits each into two words, so that a comparison is a few integer
// compares (for numbers of equal length, comparing packed digits is
// comparing the numbers). Only numbers of more than 32 digits that agree
// on their first 32 compare the rest as bytes.
type mergeKey struct {
	sec    int64
	nsec   int32
	n      int32  // digits in the sequence number
	hi, lo uint64 // its first 32 digits, packed; zeros past its end
	seq    []byte // all its digits, canonical (as rawKey.seq)
}

// packedDigits is how many digits hi and lo hold.
const packedDigits = 32

// mergeKeyOf lays k out for merging; the key keeps k's digits.
func mergeKeyOf(k rawKey) mergeKey {
	var m mergeKey
	m.set(k.ts, k.seq)
	return m
}

// set makes a the key of created_at ts and the canonical digits seq (which
// it keeps).
func (a *mergeKey) set(ts Timestamp, seq []byte) {
	a.sec, a.nsec, a.n, a.seq = ts.sec, ts.nsec, int32(len(seq)), seq
	a.hi = uint64(pack8(digitWord(seq, 0)))<<32 | uint64(pack8(digitWord(seq, 8)))
	a.lo = uint64(pack8(digitWord(seq, 16)))<<32 | uint64(pack8(digitWord(seq, 24)))
}

// digitWord returns the eight digits of seq from i as a little-endian word,
// zero bytes past seq's end; for a word that ends inside seq it loads the
// last eight bytes and shifts, rather than copy seq to a padded buffer.
func digitWord(seq []byte, i int) uint64 {
	switch n := len(seq) - i; {
	case n >= 8:
		return binary.LittleEndian.Uint64(seq[i:])
	case n <= 0:
		return 0
	case len(seq) >= 8:
		return binary.LittleEndian.Uint64(seq[len(seq)-8:]) >> (8 * (8 - n))
	default:
		var pad [8]byte
		copy(pad[:], seq[i:])
		return binary.LittleEndian.Uint64(pad[:])
	}
}

// pack8 packs the eight ASCII digits (or zero bytes) of the little-endian
// word w into 32 bits, the first digit in the top four: nibbles are pulled
// together in pairs, then pairs of pairs, inside one word.
func pack8(w uint64) uint32 {
	d := w & (lanes * 0x0f)                 // byte i: digit i
	d = (d<<4 | d>>8) & 0x00ff00ff00ff00ff  // 16-bit lane j: digits 2j, 2j+1
	d = (d<<8 | d>>16) & 0x0000ffff0000ffff // 32-bit lane k: digits 4k..4k+3
	return uint32(d<<16 | d>>32)
}

// compare orders a and b as Key.Compare orders their Keys.
func (a *mergeKey) compare(b *mergeKey) int {
	switch {
	case a.sec != b.sec:
		return cmpOrder(a.sec < b.sec)
	case a.nsec != b.nsec:
		return cmpOrder(a.nsec < b.nsec)
	case a.n != b.n:
		return cmpOrder(a.n < b.n)
	case a.hi != b.hi:
		return cmpOrder(a.hi < b.hi)
	case a.lo != b.lo:
		return cmpOrder(a.lo < b.lo)
	case a.n > packedDigits:
		return bytes.Compare(a.seq[packedDigits:], b.seq[packedDigits:])
	}
	return 0
}

func cmpOrder(less bool) int {
	if less {
		return -1
	}
	return 1
}

// key returns k as a Key (a copy of the digits).
func (a *mergeKey) key() Key {
	return Key{CreatedAt: Timestamp{sec: a.sec, nsec: a.nsec}, Seq: SeqNum{digits: string(a.seq)}}
}

// A loserTree is a tournament over the shards' heads: each inner node
// keeps the loser of the match below it, tree[0] the overall winner, so
// that after the winner's shard moves on, one match per level (4 with 16
// shards, against about 8 for a binary heap's sift-down) finds the next.
// A shard without a head loses to every shard with one.
type loserTree struct {
	cur  []*cursor
	tree []int32
}

func newLoserTree(cur []*cursor) *loserTree {
	t := &loserTree{cur: cur, tree: make([]int32, max(len(cur), 1))}
	if len(cur) > 0 {
		t.tree[0] = t.build(1)
	}
	return t
}

// build plays the matches below node and returns its winner.
func (t *loserTree) build(node int) int32 {
	if node >= len(t.cur) {
		return int32(node - len(t.cur))
	}
	a, b := t.build(2*node), t.build(2*node+1)
	if t.before(b, a) {
		a, b = b, a
	}
	t.tree[node] = b
	return a
}

// before reports whether shard i's head comes before shard j's: by key,
// then arrival. A shard with no head comes after all.
func (t *loserTree) before(i, j int32) bool {
	a, b := t.cur[i], t.cur[j]
	switch {
	case !a.head:
		return false
	case !b.head:
		return true
	}
	if c := a.key.compare(&b.key); c != 0 {
		return c < 0
	}
	return a.clock < b.clock
}

// winner returns the shard whose head comes first, or nil when no shard
// has a head.
func (t *loserTree) winner() *cursor {
	if len(t.cur) == 0 {
		return nil
	}
	w := t.cur[t.tree[0]]
	if !w.head {
		return nil
	}
	return w
}

// replay finds the new winner after the winner's head changed.
func (t *loserTree) replay() {
	w := t.tree[0]
	for node := (int(w) + len(t.cur)) / 2; node > 0; node /= 2 {
		if t.before(t.tree[node], w) {
			t.tree[node], w = w, t.tree[node]
		}
	}
	t.tree[0] = w
}
