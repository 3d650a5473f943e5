package ordering

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestPack8 checks the packing of eight digits against the obvious loop,
// for every digit in every place and for the zero padding.
func TestPack8(t *testing.T) {
	loop := func(b []byte) uint32 {
		var x uint32
		for _, c := range b[:8] {
			x = x<<4 | uint32(c&0x0f)
		}
		return x
	}
	for place := range 8 {
		for d := byte('0'); d <= '9'; d++ {
			for _, fill := range []byte{'0', '9', 0} {
				b := []byte(strings.Repeat(string(fill), 8))
				b[place] = d
				if got, want := pack8(binary.LittleEndian.Uint64(b)), loop(b); got != want {
					t.Fatalf("pack8(%q) = %#x, want %#x", b, got, want)
				}
			}
		}
	}
}

// TestMergeKeyCompareMatchesKey: the packed comparison orders keys as
// Key.Compare does, for sequence numbers of every length around the 32
// packed digits, with shared prefixes.
func TestMergeKeyCompareMatchesKey(t *testing.T) {
	digits := rapid.Custom(func(t *rapid.T) string {
		n := rapid.SampledFrom([]int{0, 1, 8, 15, 16, 17, 31, 32, 33, 40}).Draw(t, "n")
		s := strings.Repeat("1", n)
		if n > 0 {
			i := rapid.IntRange(0, n-1).Draw(t, "at")
			s = s[:i] + fmt.Sprint(rapid.IntRange(0, 9).Draw(t, "d")) + s[i+1:]
		}
		return strings.TrimLeft(s, "0")
	})
	rapid.Check(t, func(t *rapid.T) {
		var keys []Key
		for i := range 2 {
			sec := int64(rapid.IntRange(-1, 1).Draw(t, fmt.Sprint("sec", i)))
			nsec := int32(rapid.IntRange(0, 1).Draw(t, fmt.Sprint("nsec", i)))
			keys = append(keys, Key{CreatedAt: Timestamp{sec: sec, nsec: nsec}, Seq: SeqNum{digits: digits.Draw(t, fmt.Sprint("seq", i))}})
		}
		a, b := mergeKeyOf(rawKeyOf(keys[0])), mergeKeyOf(rawKeyOf(keys[1]))
		if got, want := a.compare(&b), keys[0].Compare(keys[1]); got != want {
			t.Fatalf("compare(%v, %v) = %d, want %d", keys[0], keys[1], got, want)
		}
		if a.key() != keys[0] {
			t.Fatalf("key() = %v, want %v", a.key(), keys[0])
		}
	})
}

// TestLoserTreeFindsTheFirstHead: with up to 20 shards whose heads change
// and run out, the winner is always the first head by key and clock.
func TestLoserTreeFindsTheFirstHead(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 20).Draw(t, "shards")
		clock := uint64(0)
		cur := make([]*cursor, n)
		newHead := func(c *cursor, t *rapid.T) {
			if rapid.IntRange(0, 5).Draw(t, "end") == 0 {
				c.head = false
				return
			}
			clock++
			k := Key{CreatedAt: Timestamp{sec: int64(rapid.IntRange(0, 3).Draw(t, "sec"))},
				Seq: SeqNum{digits: strings.TrimLeft(fmt.Sprint(rapid.IntRange(0, 3).Draw(t, "seq")), "0")}}
			c.head, c.clock, c.key = true, clock, mergeKeyOf(rawKeyOf(k))
		}
		for i := range cur {
			cur[i] = &cursor{idx: i}
			newHead(cur[i], t)
		}
		lt := newLoserTree(cur)
		for range 60 {
			live := slices.DeleteFunc(slices.Clone(cur), func(c *cursor) bool { return !c.head })
			var want *cursor
			if len(live) > 0 {
				want = slices.MinFunc(live, func(a, b *cursor) int {
					if c := a.key.compare(&b.key); c != 0 {
						return c
					}
					return int(a.clock) - int(b.clock)
				})
			}
			got := lt.winner()
			if got != want {
				t.Fatalf("winner %v, want %v", got, want)
			}
			if got == nil {
				return
			}
			newHead(got, t)
			lt.replay()
		}
	})
}

// TestDigitWordPadsWithZeros: the words digitWord loads are those of the
// digits copied to a zero-filled buffer, for every length and offset.
func TestDigitWordPadsWithZeros(t *testing.T) {
	for n := 0; n <= 40; n++ {
		seq := []byte("1234567890123456789012345678901234567890"[:n])
		var pad [48]byte
		copy(pad[:], seq)
		for _, i := range []int{0, 8, 16, 24} {
			if got, want := digitWord(seq, i), binary.LittleEndian.Uint64(pad[i:]); got != want {
				t.Fatalf("digitWord(%q, %d) = %#x, want %#x", seq, i, got, want)
			}
		}
	}
}
