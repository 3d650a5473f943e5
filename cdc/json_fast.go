package cdc

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/cdclog/cdclog/internal/slab"
)

// The fast path of ParseJSON: the exact compact shapes that AppendJSON
// writes (and the seed's progress shape), with no white space, fields in
// AppendJSON's order and small plain integers. Anything else, including any
// error, makes it give up and leave the line to parseJSONGeneral, which
// must decode every line the fast path accepts to the same message
// (FuzzParseJSON checks this).

const (
	fastUpdate   = `{"update":{"data":`
	fastProgress = `{"progress":{"`
	fastFinish   = `{"finish":{"time":`
	fastTime     = `,"time":`
	fastDiff     = `,"diff":`
)

// parseJSONFast decodes line into *m and returns true, or returns false
// without touching *m.
func parseJSONFast(line []byte, m *Message, slab *[]Count) bool {
	if len(line) < 16 || line[0] != '{' || line[1] != '"' {
		return false
	}
	switch line[2] {
	case 'u':
		return fastUpdateLine(line, m)
	case 'p':
		return fastProgressLine(line, m, slab)
	case 'f':
		return fastFinishLine(line, m)
	}
	return false
}

// at reports whether b holds s at offset i.
func at(b []byte, i int, s string) bool {
	return len(b)-i >= len(s) && string(b[i:i+len(s)]) == s
}

// closes reports whether b[i:] is exactly s.
func closes(b []byte, i int, s string) bool {
	return len(b)-i == len(s) && string(b[i:]) == s
}

func fastUpdateLine(b []byte, m *Message) bool {
	if !at(b, 0, fastUpdate) {
		return false
	}
	i := len(fastUpdate)
	end, ok := canonEnd(b, i, 0)
	if !ok || !at(b, end, fastTime) {
		return false
	}
	data := b[i:end:end]
	t, i, ok := fastUint(b, end+len(fastTime))
	if !ok || !at(b, i, fastDiff) {
		return false
	}
	diff, i, ok := fastInt(b, i+len(fastDiff))
	if !ok || diff == 0 || !closes(b, i, "}}") {
		return false
	}
	*m = Message{Kind: KindUpdate, Update: Update{Data: data, Time: t, Diff: diff}}
	return true
}

func fastFinishLine(b []byte, m *Message) bool {
	if !at(b, 0, fastFinish) {
		return false
	}
	t, i, ok := fastUint(b, len(fastFinish))
	if !ok || !closes(b, i, "}}") {
		return false
	}
	*m = Message{Kind: KindFinish, Finish: Finish{Time: t}}
	return true
}

func fastProgressLine(b []byte, m *Message, slab *[]Count) bool {
	if !at(b, 0, fastProgress) {
		return false
	}
	i := len(fastProgress)
	if at(b, i, `time":`) {
		return fastSeedLine(b, i+len(`time":`), m, slab)
	}
	if !at(b, i, `lower":`) {
		return false
	}
	p := Progress{Unbounded: true}
	var ok bool
	if p.Lower, i, ok = fastUint(b, i+len(`lower":`)); !ok {
		return false
	}
	if at(b, i, `,"upper":`) {
		if p.Upper, i, ok = fastUint(b, i+len(`,"upper":`)); !ok || p.Upper <= p.Lower {
			return false
		}
		p.Unbounded = false
	}
	if !at(b, i, `,"counts":[`) {
		return false
	}
	if p.Counts, i, ok = fastCounts(b, i+len(`,"counts":[`), &p, slab); !ok || !closes(b, i, "}}") {
		return false
	}
	*m = Message{Kind: KindProgress, Progress: p}
	return true
}

// fastCounts reads count entries up to and including the closing ']':
// strictly increasing times inside p's range. Zero counts are dropped.
func fastCounts(b []byte, i int, p *Progress, slab *[]Count) ([]Count, int, bool) {
	if at(b, i, "]") {
		return nil, i + 1, true
	}
	var stack [16]Count
	cs := stack[:0]
	for k := 0; ; k++ {
		if !at(b, i, `{"time":`) {
			return nil, i, false
		}
		var c Count
		var ok bool
		if c.Time, i, ok = fastUint(b, i+len(`{"time":`)); !ok || !p.Covers(c.Time) || !at(b, i, `,"count":`) {
			return nil, i, false
		}
		if k > 0 && c.Time <= cs[len(cs)-1].Time {
			return nil, i, false
		}
		if c.Count, i, ok = fastUint(b, i+len(`,"count":`)); !ok || c.Count == 0 {
			return nil, i, false
		}
		cs = append(cs, c)
		switch {
		case at(b, i, "},"):
			i += 2
		case at(b, i, "}]"):
			return keepCounts(cs, slab), i + 2, true
		default:
			return nil, i, false
		}
	}
}

func fastSeedLine(b []byte, i int, m *Message, slab *[]Count) bool {
	t, i, ok := fastUint(b, i)
	if !ok || !at(b, i, `,"count":`) {
		return false
	}
	c, i, ok := fastUint(b, i+len(`,"count":`))
	if !ok || !closes(b, i, "}}") {
		return false
	}
	p := Progress{Lower: t, Upper: t + 1}
	if c != 0 { // a zero count: the time holds no update, and no count is listed
		p.Counts = keepCounts([]Count{{Time: t, Count: c}}, slab)
	}
	if t == MaxTime {
		p.Upper, p.Unbounded = 0, true
	}
	*m = Message{Kind: KindProgress, Progress: p}
	return true
}

// fastUint reads a plain unsigned integer of at most 20 digits that fits
// in a uint64 at b[i]. A leading zero ends the number, so "07" fails on the
// caller's next check, as it should.
func fastUint(b []byte, i int) (uint64, int, bool) {
	if i >= len(b) || !isDigit(b[i]) {
		return 0, i, false
	}
	if b[i] == '0' {
		return 0, i + 1, true
	}
	if i+1 < len(b) && !isDigit(b[i+1]) { // one digit, as most counts and diffs have
		return uint64(b[i] - '0'), i + 1, true
	}
	if len(b)-i >= 8 {
		if v, n := eightDigits(binary.LittleEndian.Uint64(b[i:])); n < 8 {
			return v, i + n, true
		}
	}
	v := uint64(b[i] - '0')
	j := i + 1
	for end := min(len(b), i+19); j < end; j++ {
		d := b[j] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
	}
	if j < len(b) && isDigit(b[j]) { // a 20th digit
		const maxDiv10, maxMod10 = math.MaxUint64 / 10, math.MaxUint64 % 10
		d := uint64(b[j] - '0')
		if v > maxDiv10 || (v == maxDiv10 && d > maxMod10) {
			return 0, j, false
		}
		v = v*10 + d
		j++
		if j < len(b) && isDigit(b[j]) {
			return 0, j, false
		}
	}
	return v, j, true
}

// eightDigits returns the value of the digits that x, eight bytes of input
// in little-endian order, starts with, and how many there are, with no
// loop (times and counts are most of what the fast path reads): a byte is
// a digit when its high nibble is 3 and adding 6 leaves it so. Adding can
// carry only out of a byte of 0xfa or more, which is no digit, so the
// bytes before the first non-digit are told right. The value is
// meaningful only when fewer than eight bytes are digits.
func eightDigits(x uint64) (uint64, int) {
	const hi, three, six = 0xf0f0f0f0f0f0f0f0, 0x3030303030303030, 0x0606060606060606
	notDigit := (x&hi ^ three) | ((x+six)&hi ^ three)
	n := bits.TrailingZeros64(notDigit) / 8
	if n == 8 {
		return 0, 8
	}
	// The digits moved to the top, zeros before them, then combined
	// pairwise: 2 digits, 4, 8 (each step one multiplication).
	x <<= (8 - n) * 8
	x = (x & 0x0f0f0f0f0f0f0f0f) * (10<<8 + 1) >> 8
	x = (x & 0x00ff00ff00ff00ff) * (100<<16 + 1) >> 16
	x = (x & 0x0000ffff0000ffff) * (10000<<32 + 1) >> 32
	return x, n
}

// fastInt reads a plain signed integer that fits in an int64 at b[i].
func fastInt(b []byte, i int) (int64, int, bool) {
	neg := at(b, i, "-")
	if neg {
		i++
	}
	v, j, ok := fastUint(b, i)
	switch {
	case !ok:
		return 0, j, false
	case neg && v <= 1<<63:
		return -int64(v-1) - 1, j, true
	case !neg && v <= math.MaxInt64:
		return int64(v), j, true
	}
	return 0, j, false
}

// countSlab is the size of the blocks a Reader keeps counts in.
const countSlab = 4096

// keepCounts returns a copy of cs that nothing else will write to: carved
// from slab, a block only ever appended to, when slab is not nil (the
// Reader's, sparing an allocation per progress statement), else freshly
// allocated.
func keepCounts(cs []Count, block *[]Count) []Count {
	if block == nil {
		return append([]Count(nil), cs...)
	}
	return slab.Keep(block, cs, countSlab)
}
