package cdc

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// ParseMsgpack decodes one msgpack message from the front of b into *m and
// returns the number of bytes it took. The message is a map of the same
// shape and keys as the JSON form, and the same variants are accepted (see
// the package documentation); integers may use any msgpack integer
// encoding, and a float with an exact integer value is accepted for a
// time, count or diff, as 7.0 is in JSON.
//
// Data is converted to canonical JSON in a fresh buffer: map keys must be
// strings, strings valid UTF-8, floats finite (written with
// strconv.AppendFloat(f, 'g', -1, 64), or 32 for a float32); bin and ext
// values are rejected, as is nesting deeper than MaxDepth. The error for a
// message cut short wraps io.ErrUnexpectedEOF. On error n is 0 and *m is
// the zero Message.
func ParseMsgpack(b []byte, m *Message) (n int, err error) {
	return parseMsgpack(b, m, nil, nil)
}

// parseMsgpack is ParseMsgpack building data in slab and keeping the fast
// path's counts in counts, when they are not nil (see keepCounts).
func parseMsgpack(b []byte, m *Message, slab *[]byte, counts *[]Count) (n int, err error) {
	if n, ok := fastMsgpack(b, m, slab, counts); ok {
		return n, nil
	}
	return parseMsgpackGeneral(b, m, slab)
}

// parseMsgpackGeneral is the decoder for every shape, and the reference
// the fast path is tested against.
func parseMsgpackGeneral(b []byte, m *Message, slab *[]byte) (n int, err error) {
	d := mpDecoder{b: b, slab: slab}
	if err := d.message(m); err != nil {
		*m = Message{}
		return 0, err
	}
	return d.i, nil
}

// wrongType reports a value of the wrong msgpack type for field of what,
// or malformed msgpack when no value starts there.
func (d *mpDecoder) wrongType(what, field, want string) error {
	kind := d.kind()
	if kind == "" {
		return d.malformed(d.i, "invalid type byte 0x%02x", d.b[d.i])
	}
	if field != "" {
		return errorf("%s%q must be %s, not %s", what, field, want, kind)
	}
	return errorf("%smust be %s, not %s", what, want, kind)
}

// mapOf reads a map header for what; a value that is not a map is an error.
func (d *mpDecoder) mapOf(what string) (int, error) {
	start := d.i
	family, n, err := d.header()
	if err == nil && family != mpMap {
		d.i = start
		err = d.wrongType(what, "", "a map")
	}
	return n, err
}

// key reads a map key, which must be a string; what names the map in the
// error.
func (d *mpDecoder) key(what string) ([]byte, error) {
	key, ok, err := d.keyOK()
	if err == nil && !ok {
		err = d.wrongType(what, "", "a string (a map key)")
	}
	return key, err
}

// keyOK reads a map key, or reports that the next value is not a string
// without consuming it.
func (d *mpDecoder) keyOK() ([]byte, bool, error) {
	start := d.i
	family, n, err := d.header()
	if err != nil {
		return nil, false, err
	}
	if family != mpStr {
		d.i = start
		return nil, false, nil
	}
	key, err := d.bytes(n)
	return key, true, err
}

func (d *mpDecoder) message(m *Message) error {
	if _, err := d.peek(); err != nil {
		return err
	}
	start := d.i
	family, n, err := d.header()
	if err != nil {
		return err
	}
	if family != mpMap {
		d.i = start
		if d.kind() == "" {
			return d.malformed(start, "invalid type byte 0x%02x", d.b[start])
		}
		return errorf("message is not a map but %s", d.kind())
	}
	if n == 0 {
		return errorf("message has no tag " + tagsWanted)
	}
	tag, err := d.key("message key ")
	if err != nil {
		return err
	}
	switch string(tag) {
	case "update":
		err = d.update(m)
	case "progress":
		err = d.progress(m)
	case "finish":
		err = d.finish(m)
	default:
		return errorf("unknown tag %q "+tagsWanted, tag)
	}
	if err != nil || n == 1 {
		return err
	}
	other, err := d.key("message key ")
	if err != nil {
		return err
	}
	return errorf("more than one tag (%q and %q)", tag, other)
}

// uint reads a non-negative integer for field of what.
func (d *mpDecoder) uint(what, field string) (uint64, error) {
	n, ok, err := d.number()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, d.wrongType(what, field, "a number")
	}
	return n.asUint(what, field)
}

func (d *mpDecoder) update(m *Message) error {
	n, err := d.mapOf(inUpdate)
	if err != nil {
		return err
	}
	var f updateFields
	for ; n > 0; n-- {
		key, err := d.key(inUpdate + "field name ")
		if err != nil {
			return err
		}
		var bit uint8
		switch string(key) {
		case "data":
			bit = fData
			if f.seen&bit == 0 {
				f.u.Data, err = d.data()
			}
		case "time":
			bit = fTime
			if f.seen&bit == 0 {
				f.u.Time, err = d.uint(inUpdate, "time")
			}
		case "diff":
			bit = fDiff
			if f.seen&bit == 0 {
				f.u.Diff, err = d.diff()
			}
		default:
			return unknownField(inUpdate, key, `"data", "time" and "diff"`)
		}
		if f.seen&bit != 0 {
			return duplicate(inUpdate, string(key))
		}
		if err != nil {
			return err
		}
		f.seen |= bit
	}
	return f.build(m)
}

func (d *mpDecoder) diff() (int64, error) {
	n, ok, err := d.number()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, d.wrongType(inUpdate, "diff", "a number")
	}
	return n.asDiff(inUpdate)
}

func (d *mpDecoder) finish(m *Message) error {
	n, err := d.mapOf(inFinish)
	if err != nil {
		return err
	}
	var seen bool
	var t uint64
	for ; n > 0; n-- {
		key, err := d.key(inFinish + "field name ")
		if err != nil {
			return err
		}
		if string(key) != "time" {
			return unknownField(inFinish, key, `"time"`)
		}
		if seen {
			return duplicate(inFinish, "time")
		}
		seen = true
		if t, err = d.uint(inFinish, "time"); err != nil {
			return err
		}
	}
	if !seen {
		return errorf(inFinish + `missing "time"`)
	}
	*m = Message{Kind: KindFinish, Finish: Finish{Time: t}}
	return nil
}

func (d *mpDecoder) progress(m *Message) error {
	n, err := d.mapOf(inProgress)
	if err != nil {
		return err
	}
	var p progressFields
	var scratch [8]Count
	for ; n > 0; n-- {
		key, err := d.key(inProgress + "field name ")
		if err != nil {
			return err
		}
		var bit uint8
		switch string(key) {
		case "lower":
			bit = fLower
			if p.seen&bit == 0 {
				p.lower, _, err = d.bound("lower")
			}
		case "upper":
			bit = fUpper
			if p.seen&bit == 0 {
				p.upper, p.unbounded, err = d.bound("upper")
			}
		case "counts":
			bit = fCounts
			if p.seen&bit == 0 {
				p.counts, err = d.counts(scratch[:0])
			}
		case "time":
			bit = fTime
			if p.seen&bit == 0 {
				p.time, err = d.uint(inProgress, "time")
			}
		case "count":
			bit = fCount
			if p.seen&bit == 0 {
				p.count, err = d.uint(inProgress, "count")
			}
		default:
			return unknownField(inProgress, key, `"lower", "upper" and "counts"`)
		}
		if p.seen&bit != 0 {
			return duplicate(inProgress, string(key))
		}
		if err != nil {
			return err
		}
		p.seen |= bit
	}
	return p.build(m)
}

// bound reads "lower" or "upper": a number, or an array of at most one
// number. For "upper", nil and [] mean unbounded.
func (d *mpDecoder) bound(field string) (t uint64, unbounded bool, err error) {
	c, err := d.peek()
	if err != nil {
		return 0, false, err
	}
	if c == 0xc0 && field == "upper" {
		d.i++
		return 0, true, nil
	}
	start := d.i
	family, n, err := d.header()
	if err != nil {
		return 0, false, err
	}
	if family != mpArray {
		d.i = start
		t, err = d.uint(inProgress, field)
		return t, false, err
	}
	switch {
	case n == 0 && field == "lower":
		return 0, false, errorf(inProgress + `"lower" is an empty array (only "upper" may be [], meaning unbounded)`)
	case n == 0:
		return 0, true, nil
	case n > 1:
		return 0, false, errorf(inProgress+"%q has more than one element", field)
	}
	t, err = d.uint(inProgress, field)
	return t, false, err
}

// counts reads the "counts" array (or nil, meaning none), appending its
// entries to cs.
func (d *mpDecoder) counts(cs []Count) ([]Count, error) {
	c, err := d.peek()
	if err != nil {
		return cs, err
	}
	if c == 0xc0 {
		d.i++
		return cs, nil
	}
	start := d.i
	family, n, err := d.header()
	if err != nil {
		return cs, err
	}
	if family != mpArray {
		d.i = start
		return cs, d.wrongType(inProgress, "counts", "an array")
	}
	for k := 0; k < n; k++ {
		c, err := d.countEntry(k)
		if err != nil {
			return cs, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func (d *mpDecoder) countEntry(k int) (Count, error) {
	start := d.i
	family, n, err := d.header()
	if err != nil {
		return Count{}, err
	}
	if family != mpMap {
		d.i = start
		return Count{}, d.wrongType(countElem(k), "", "a map")
	}
	var f countFields
	for ; n > 0; n-- {
		key, ok, err := d.keyOK()
		if err == nil && !ok {
			err = d.wrongType(countWhat(k)+"field name ", "", "a string (a map key)")
		}
		if err != nil {
			return Count{}, err
		}
		var bit uint8
		switch string(key) {
		case "time":
			bit = fTime
			if f.seen&bit == 0 {
				f.c.Time, err = d.countUint(k, "time")
			}
		case "count":
			bit = fCount
			if f.seen&bit == 0 {
				f.c.Count, err = d.countUint(k, "count")
			}
		default:
			return Count{}, unknownField(countWhat(k), key, `"time" and "count"`)
		}
		if f.seen&bit != 0 {
			return Count{}, duplicate(countWhat(k), string(key))
		}
		if err != nil {
			return Count{}, err
		}
		f.seen |= bit
	}
	return f.c, f.check(k)
}

// countUint reads field of count entry k, naming the entry only in an error.
func (d *mpDecoder) countUint(k int, field string) (uint64, error) {
	start := d.i
	n, ok, err := d.number()
	if err != nil {
		return 0, err
	}
	if v, fits := n.uintOK(); ok && fits {
		return v, nil
	}
	d.i = start
	return d.uint(countWhat(k), field)
}

// isTruncated reports whether err says the input ended inside a message.
func isTruncated(err error) bool {
	return errors.Is(err, errTruncated)
}

// Data: native msgpack values converted to canonical JSON.

// data reads a msgpack value and returns its canonical JSON encoding in a
// fresh buffer.
func (d *mpDecoder) data() ([]byte, error) {
	// A string, the most common data, needs no converter state.
	if c, err := d.peek(); err == nil && (c >= 0xa0 && c <= 0xbf || c >= 0xd9 && c <= 0xdb) {
		_, n, err := d.header()
		if err != nil {
			return nil, err
		}
		s, err := d.bytes(n)
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(s) {
			return nil, dataError("has a string that is not valid UTF-8")
		}
		return d.kept(appendQuoted(d.dataBuf(len(s)+2), s)), nil
	}
	// The converter works on a copy of the decoder, so that d itself need
	// not escape to the heap.
	var stack [8]member
	c := mpToJSON{mpDecoder: *d, members: stack[:0]}
	data, err := c.value(d.dataBuf(64), 0)
	d.i = c.i
	return d.kept(data), err
}

// mpToJSON converts msgpack values to canonical JSON.
type mpToJSON struct {
	mpDecoder
	members []member // a stack: each open map's members
	sortBuf []byte
}

func dataError(format string, args ...any) error {
	return errorf(inUpdate+`"data" `+format, args...)
}

func (c *mpToJSON) value(dst []byte, depth int) ([]byte, error) {
	d := &c.mpDecoder
	start := d.i
	if n, ok, err := d.number(); err != nil {
		return dst, err
	} else if ok {
		return appendNumJSON(dst, n, d.b[start])
	}
	family, n, err := d.header()
	if err != nil {
		return dst, err
	}
	switch family {
	case mpMap:
		return c.object(dst, n, depth+1)
	case mpArray:
		return c.array(dst, n, depth+1)
	case mpStr:
		s, err := d.bytes(n)
		if err != nil {
			return dst, err
		}
		if !utf8.Valid(s) {
			return dst, dataError("has a string that is not valid UTF-8")
		}
		return appendQuoted(dst, s), nil
	case mpBin:
		return dst, dataError("holds binary data (msgpack bin), which JSON cannot represent")
	}
	switch d.b[start] {
	case 0xc0:
		return append(dst, "null"...), nil
	case 0xc2:
		return append(dst, "false"...), nil
	case 0xc3:
		return append(dst, "true"...), nil
	}
	d.i = start
	if d.kind() == "" {
		return dst, d.malformed(start, "invalid type byte 0x%02x", d.b[start])
	}
	return dst, dataError("holds a msgpack extension, which JSON cannot represent")
}

// appendNumJSON writes a msgpack number (whose type byte is c) as JSON.
func appendNumJSON(dst []byte, n num, c byte) ([]byte, error) {
	if !n.float {
		if n.neg {
			return strconv.AppendUint(append(dst, '-'), n.mag, 10), nil
		}
		return strconv.AppendUint(dst, n.mag, 10), nil
	}
	if math.IsNaN(n.f) || math.IsInf(n.f, 0) {
		return dst, dataError("holds %v, which JSON cannot represent", n.f)
	}
	bits := 64
	if c == 0xca {
		bits = 32
	}
	return strconv.AppendFloat(dst, n.f, 'g', -1, bits), nil
}

func (c *mpToJSON) array(dst []byte, n, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, dataError("is nested deeper than %d levels", MaxDepth)
	}
	dst = append(dst, '[')
	for k := 0; k < n; k++ {
		if k > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = c.value(dst, depth); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

func (c *mpToJSON) object(dst []byte, n, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, dataError("is nested deeper than %d levels", MaxDepth)
	}
	dst = append(dst, '{')
	body := len(dst)
	base := len(c.members)
	defer func() { c.members = c.members[:base] }()
	for k := 0; k < n; k++ {
		if k > 0 {
			dst = append(dst, ',')
		}
		keyOff := c.i
		key, err := c.key(inUpdate + `"data" map key `)
		if err != nil {
			return dst, err
		}
		if !utf8.Valid(key) {
			return dst, dataError("has a map key that is not valid UTF-8")
		}
		start := len(dst)
		dst = append(appendQuoted(dst, key), ':')
		if dst, err = c.value(dst, depth); err != nil {
			return dst, err
		}
		c.members = append(c.members, member{key: key, start: start, end: len(dst), srcOff: keyOff})
	}
	dst, err := sortMembers(dst, body, c.members[base:], &c.sortBuf, func(m member) error {
		return dataError("has duplicate map key %q", m.key)
	})
	return append(dst, '}'), err
}
