package cdc

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// A second msgpack decoder, written the obvious way on the reference
// library's token API (github.com/vmihailenco/msgpack/v5: PeekCode,
// DecodeMapLen, DecodeString, DecodeInterface for scalars), straight from
// the rules of SPEC section 2 and the package documentation. It is what
// cdclog would be without its hand-written decoder: the benchmarks compare
// the two (BenchmarkMsgpackDecoders) and the differential fuzz target
// checks that they accept the same bytes and agree on the message
// (FuzzMsgpackAgainstLibrary). It favours plainness over speed, and shares
// no code with the decoder it checks.

// refDecoder decodes messages with the library. The zero value is not
// ready: use newRefDecoder.
type refDecoder struct {
	r   bytes.Reader
	dec *msgpack.Decoder
}

func newRefDecoder() *refDecoder {
	d := &refDecoder{}
	d.dec = msgpack.NewDecoder(&d.r)
	return d
}

// decode decodes the first message of b, returning it and the number of
// bytes it took.
func (d *refDecoder) decode(b []byte) (Message, int, error) {
	d.r.Reset(b)
	d.dec.Reset(&d.r)
	m, err := d.message()
	if err != nil {
		return Message{}, 0, err
	}
	return m, len(b) - d.r.Len(), nil
}

var errRef = errors.New("rejected")

func refErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errRef}, args...)...)
}

func isMapCode(c byte) bool {
	return msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32
}

func isArrayCode(c byte) bool {
	return msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32
}

func isStrCode(c byte) bool {
	return msgpcode.IsFixedString(c) || c == msgpcode.Str8 || c == msgpcode.Str16 || c == msgpcode.Str32
}

// mapLen reads a map header, refusing anything else.
func (d *refDecoder) mapLen(what string) (int, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return 0, err
	}
	if !isMapCode(c) {
		return 0, refErr("%s is not a map", what)
	}
	return d.dec.DecodeMapLen()
}

// key reads a map key, which must be a string.
func (d *refDecoder) key() (string, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return "", err
	}
	if !isStrCode(c) {
		return "", refErr("map key is not a string")
	}
	return d.dec.DecodeString()
}

func (d *refDecoder) message() (Message, error) {
	n, err := d.mapLen("message")
	if err != nil {
		return Message{}, err
	}
	if n == 0 {
		return Message{}, refErr("no tag")
	}
	tag, err := d.key()
	if err != nil {
		return Message{}, err
	}
	var m Message
	switch tag {
	case "update":
		m, err = d.update()
	case "progress":
		m, err = d.progress()
	case "finish":
		m, err = d.finish()
	default:
		return Message{}, refErr("unknown tag %q", tag)
	}
	if err != nil {
		return Message{}, err
	}
	if n > 1 {
		// Refused once the first tag's body and the second key are read.
		if _, err := d.key(); err != nil {
			return Message{}, err
		}
		return Message{}, refErr("more than one tag")
	}
	return m, nil
}

// refNum is a number as the library reads it: an integer as its sign and
// magnitude, or a float of bits bits.
type refNum struct {
	neg  bool
	mag  uint64
	f    float64
	bits int // 32 or 64 for a float, 0 for an integer
}

func isIntCode(c byte) bool {
	return msgpcode.IsFixedNum(c) || c >= msgpcode.Uint8 && c <= msgpcode.Int64
}

// number reads an integer or a float with the library's typed calls;
// anything else is refused without being consumed.
func (d *refDecoder) number() (refNum, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return refNum{}, err
	}
	switch {
	case c <= msgpcode.PosFixedNumHigh || c >= msgpcode.Uint8 && c <= msgpcode.Uint64:
		v, err := d.dec.DecodeUint64()
		return refNum{mag: v}, err
	case isIntCode(c):
		v, err := d.dec.DecodeInt64()
		if v < 0 {
			return refNum{neg: true, mag: uint64(-(v + 1)) + 1}, err
		}
		return refNum{mag: uint64(v)}, err
	case c == msgpcode.Float:
		f, err := d.dec.DecodeFloat32()
		return refNum{f: float64(f), bits: 32}, err
	case c == msgpcode.Double:
		f, err := d.dec.DecodeFloat64()
		return refNum{f: f, bits: 64}, err
	}
	return refNum{}, refErr("not a number")
}

// integer interprets n as an exact integer: its sign and magnitude (big
// when beyond uint64). A float must have an integer value.
func (n refNum) integer() (neg bool, mag uint64, big bool, err error) {
	if n.bits == 0 {
		return n.neg, n.mag, false, nil
	}
	f := n.f
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return false, 0, false, refErr("not an integer")
	}
	neg = math.Signbit(f)
	if a := math.Abs(f); a < 1<<64 {
		return neg, uint64(a), false, nil
	}
	return neg, 0, true, nil
}

// uint reads a time, count, lower or upper: a non-negative integer that
// fits 64 bits (-0 is 0).
func (d *refDecoder) uint() (uint64, error) {
	n, err := d.number()
	if err != nil {
		return 0, err
	}
	neg, mag, big, err := n.integer()
	switch {
	case err != nil:
		return 0, err
	case big, neg && mag != 0:
		return 0, refErr("out of range")
	}
	return mag, nil
}

func (d *refDecoder) diff() (int64, error) {
	n, err := d.number()
	if err != nil {
		return 0, err
	}
	neg, mag, big, err := n.integer()
	switch {
	case err != nil:
		return 0, err
	case mag == 0 && !big:
		return 0, refErr("zero diff")
	case big, neg && mag > 1<<63, !neg && mag > math.MaxInt64:
		return 0, refErr("diff out of range")
	case neg:
		return int64(-mag), nil // two's complement: -(1<<63) included
	}
	return int64(mag), nil
}

// field reads the next key of a map of fields and returns its index in
// known, refusing unknown keys and keys already in seen (a bit set by
// index), which it updates.
func (d *refDecoder) field(known []string, seen *uint8) (int, error) {
	k, err := d.key()
	if err != nil {
		return 0, err
	}
	i := slices.Index(known, k)
	switch {
	case i < 0:
		return 0, refErr("unknown field %q", k)
	case *seen&(1<<i) != 0:
		return 0, refErr("duplicate field %q", k)
	}
	*seen |= 1 << i
	return i, nil
}

var (
	refUpdateFields   = []string{"data", "time", "diff"}
	refFinishFields   = []string{"time"}
	refProgressFields = []string{"lower", "upper", "counts", "time", "count"}
	refCountFields    = []string{"time", "count"}
)

func (d *refDecoder) update() (Message, error) {
	n, err := d.mapLen("update")
	if err != nil {
		return Message{}, err
	}
	var u Update
	var seen uint8
	for ; n > 0; n-- {
		i, err := d.field(refUpdateFields, &seen)
		if err != nil {
			return Message{}, err
		}
		switch i {
		case 0:
			u.Data, err = d.data(make([]byte, 0, 32), 0)
		case 1:
			u.Time, err = d.uint()
		case 2:
			u.Diff, err = d.diff()
		}
		if err != nil {
			return Message{}, err
		}
	}
	if seen != 0b111 {
		return Message{}, refErr("update: missing field")
	}
	return Message{Kind: KindUpdate, Update: u}, nil
}

func (d *refDecoder) finish() (Message, error) {
	n, err := d.mapLen("finish")
	if err != nil {
		return Message{}, err
	}
	var t uint64
	var seen uint8
	for ; n > 0; n-- {
		if _, err := d.field(refFinishFields, &seen); err != nil {
			return Message{}, err
		}
		if t, err = d.uint(); err != nil {
			return Message{}, err
		}
	}
	if seen == 0 {
		return Message{}, refErr("finish: missing time")
	}
	return NewFinish(t), nil
}

func (d *refDecoder) progress() (Message, error) {
	n, err := d.mapLen("progress")
	if err != nil {
		return Message{}, err
	}
	var (
		lower, upper, time, count uint64
		none, unbounded           bool
		counts                    []Count
		seen                      uint8
	)
	for ; n > 0; n-- {
		i, err := d.field(refProgressFields, &seen)
		if err != nil {
			return Message{}, err
		}
		switch i {
		case 0:
			if lower, none, err = d.bound(false); err == nil && none {
				err = refErr("empty lower")
			}
		case 1:
			upper, unbounded, err = d.bound(true)
		case 2:
			counts, err = d.counts()
		case 3:
			time, err = d.uint()
		case 4:
			count, err = d.uint()
		}
		if err != nil {
			return Message{}, err
		}
	}
	const primary, seed = 0b00111, 0b11000
	if seen&seed != 0 {
		if seen != seed {
			return Message{}, refErr("bad seed shape")
		}
		p := Progress{Lower: time, Upper: time + 1, Unbounded: time == MaxTime}
		if p.Unbounded {
			p.Upper = 0
		}
		if count > 0 {
			p.Counts = []Count{{time, count}}
		}
		return Message{Kind: KindProgress, Progress: p}, nil
	}
	if seen&1 == 0 {
		return Message{}, refErr("missing lower")
	}
	p := Progress{Lower: lower, Upper: upper, Unbounded: unbounded || seen&2 == 0}
	if p.Unbounded {
		p.Upper = 0
	} else if p.Upper <= p.Lower {
		return Message{}, refErr("upper not above lower")
	}
	slices.SortStableFunc(counts, func(a, b Count) int { return cmpUint(a.Time, b.Time) })
	for i, c := range counts {
		if !p.Covers(c.Time) {
			return Message{}, refErr("count outside the range")
		}
		if i > 0 && counts[i-1].Time == c.Time {
			if counts[i-1].Count != c.Count {
				return Message{}, refErr("two counts for one time")
			}
			continue
		}
		if c.Count > 0 {
			p.Counts = append(p.Counts, c)
		}
	}
	return Message{Kind: KindProgress, Progress: p}, nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// bound reads lower or upper: a number or an array of at most one; for
// upper, nil too. none reports nil or [].
func (d *refDecoder) bound(upper bool) (t uint64, none bool, err error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return 0, false, err
	}
	switch {
	case c == msgpcode.Nil && upper:
		return 0, true, d.dec.DecodeNil()
	case isArrayCode(c):
		n, err := d.dec.DecodeArrayLen()
		switch {
		case err != nil:
			return 0, false, err
		case n == 0:
			return 0, true, nil
		case n > 1:
			return 0, false, refErr("bound with more than one element")
		}
	}
	t, err = d.uint()
	return t, false, err
}

// counts reads the counts array, or nil.
func (d *refDecoder) counts() ([]Count, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return nil, err
	}
	if c == msgpcode.Nil {
		return nil, d.dec.DecodeNil()
	}
	if !isArrayCode(c) {
		return nil, refErr("counts is not an array")
	}
	n, err := d.dec.DecodeArrayLen()
	if err != nil {
		return nil, err
	}
	var cs []Count
	for ; n > 0; n-- {
		m, err := d.mapLen("count")
		if err != nil {
			return nil, err
		}
		var e Count
		var seen uint8
		for ; m > 0; m-- {
			i, err := d.field(refCountFields, &seen)
			if err != nil {
				return nil, err
			}
			if i == 0 {
				e.Time, err = d.uint()
			} else {
				e.Count, err = d.uint()
			}
			if err != nil {
				return nil, err
			}
		}
		if seen != 0b11 {
			return nil, refErr("count entry missing a field")
		}
		cs = append(cs, e)
	}
	return cs, nil
}

// data reads a value and appends its canonical JSON to dst: keys sorted
// by their bytes, strings with only '"', '\\' and control characters
// escaped, integers in decimal, floats as strconv's shortest 'g' form for
// their width.
func (d *refDecoder) data(dst []byte, depth int) ([]byte, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case isStrCode(c):
		s, err := d.dec.DecodeString()
		if err != nil {
			return nil, err
		}
		return refQuote(dst, s)
	case isArrayCode(c):
		if depth+1 > MaxDepth {
			return nil, refErr("too deep")
		}
		n, err := d.dec.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		dst = append(dst, '[')
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = d.data(dst, depth+1); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case isMapCode(c):
		return d.object(dst, depth+1)
	}
	switch {
	case c == msgpcode.Nil:
		return append(dst, "null"...), d.dec.DecodeNil()
	case c == msgpcode.False || c == msgpcode.True:
		v, err := d.dec.DecodeBool()
		return strconv.AppendBool(dst, v), err
	}
	n, err := d.number()
	switch {
	case err != nil:
		return nil, err // bin, ext or not msgpack: JSON has no such value
	case n.bits != 0:
		return refFloat(dst, n.f, n.bits)
	case n.neg:
		dst = append(dst, '-')
	}
	return strconv.AppendUint(dst, n.mag, 10), nil
}

func refFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, refErr("not a JSON number")
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits), nil
}

func (d *refDecoder) object(dst []byte, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, refErr("too deep")
	}
	n, err := d.dec.DecodeMapLen()
	if err != nil {
		return nil, err
	}
	type member struct{ key, text []byte }
	var ms []member
	for ; n > 0; n-- {
		k, err := d.key()
		if err != nil {
			return nil, err
		}
		kq, err := refQuote(nil, k)
		if err != nil {
			return nil, err
		}
		v, err := d.data(nil, depth)
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{[]byte(k), append(append(kq, ':'), v...)})
	}
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			if bytes.Equal(ms[i-1].key, m.key) {
				return nil, refErr("duplicate key")
			}
			dst = append(dst, ',')
		}
		dst = append(dst, m.text...)
	}
	return append(dst, '}'), nil
}

// refQuote writes s as a canonical JSON string.
func refQuote(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, refErr("invalid UTF-8")
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\b':
			dst = append(dst, `\b`...)
		case c == '\f':
			dst = append(dst, `\f`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '\r':
			dst = append(dst, `\r`...)
		case c == '\t':
			dst = append(dst, `\t`...)
		case c < 0x20:
			dst = fmt.Appendf(dst, `\u%04x`, c)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"'), nil
}

// FuzzMsgpackAgainstLibrary decodes the same bytes with ParseMsgpack and
// with refDecoder, the reference library's token API under the rules of
// SPEC section 2: both must accept or both refuse, and when both accept,
// take the same number of bytes and give the same message, data bytes
// included. The wire level (lengths, integer and float encodings,
// truncation) is the library's; the message rules are a second, plain
// implementation of the documented ones.
func FuzzMsgpackAgainstLibrary(f *testing.F) {
	for _, s := range jsonSeeds {
		var m Message
		if ParseJSON([]byte(s), &m) == nil && CheckMsgpack(&m) == nil {
			f.Add(msgpackOf(&m))
		}
	}
	for _, b := range msgpackSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got Message
		n, err := ParseMsgpack(b, &got)
		want, wn, werr := newRefDecoder().decode(b)
		switch {
		case (err == nil) != (werr == nil):
			t.Fatalf("% x: cdclog %v, %v; library %v, %v", b, got, err, want, werr)
		case err == nil && (n != wn || !sameMessage(got, want)):
			t.Fatalf("% x: cdclog took %d bytes as %v; library %d bytes as %v", b, n, got, wn, want)
		}
	})
}

// msgpackSeeds are messages in the shapes other encoders write: the
// variants, every integer and float width, and values to refuse.
func msgpackSeeds(tb testing.TB) [][]byte {
	upd := func(data, time, diff any) obj {
		return obj{{"update", obj{{"data", data}, {"time", time}, {"diff", diff}}}}
	}
	prog := func(fields ...kv) obj { return obj{{"progress", obj(fields)}} }
	counts := []any{obj{{"time", 7}, {"count", 2}}, obj{{"count", 0}, {"time", 6}}, obj{{"time", 7}, {"count", 2}}}
	var seeds [][]byte
	for _, v := range []any{
		upd("k", 7, 1),
		upd(obj{{"b", []any{1, -2, 2.5, float32(0.1), nil, true}}, {"a", obj{}}}, uint64(MaxTime), int64(math.MinInt64)),
		upd(map[string]any{"n": int32(-70000), "u": uint16(300), "s": "é\n\x01"}, uint32(1<<31), int16(-300)),
		upd(0, 7.0, float32(-2)),
		upd(math.Copysign(0, -1), math.Copysign(0, -1), 1),
		upd(obj{{"a", 1}, {"a", 2}}, 1, 1),
		upd([]byte{1}, 1, 1),
		upd(raw{0xd4, 0x01, 0x00}, 1, 1),
		upd(raw{0xd6, 0xff, 0, 0, 0, 0}, 1, 1), // the library's timestamp extension
		upd(math.NaN(), 1, 1),
		upd("\xff", 1, 1),
		upd(raw(bytes.Repeat([]byte{0x91}, MaxDepth+1)), 1, 1),
		upd(raw(append(bytes.Repeat([]byte{0x91}, MaxDepth), 0xc0)), 1, 1),
		upd("k", 1e20, 1),
		upd("k", 1, uint64(1<<63)),
		upd("k", -1, 1),
		prog(kv{"lower", 5}, kv{"upper", 8}, kv{"counts", counts}),
		prog(kv{"lower", []any{5}}, kv{"upper", []any{}}),
		prog(kv{"lower", 5}, kv{"upper", nil}, kv{"counts", nil}),
		prog(kv{"lower", 5}),
		prog(kv{"lower", []any{}}),
		prog(kv{"lower", 5}, kv{"upper", 5}),
		prog(kv{"time", 7}, kv{"count", 2}),
		prog(kv{"time", uint64(MaxTime)}, kv{"count", 0}),
		prog(kv{"time", 7}, kv{"count", 2}, kv{"lower", 7}),
		obj{{"finish", obj{{"time", 7}}}},
		obj{{"finish", obj{{"time", 1}}}, {"update", obj{}}},
		obj{{"insert", obj{}}},
		obj{},
		[]any{1},
	} {
		seeds = append(seeds, mp(tb, v))
	}
	whole := mp(tb, upd(obj{{"k", strings.Repeat("x", 40)}}, uint64(1<<40), -1000))
	return append(seeds, whole[:len(whole)-3], append(whole, 0xc1))
}
