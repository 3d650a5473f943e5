package cdc

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Conversions of data between canonical JSON and native msgpack values.

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

// appendDataMsgpack writes canonical JSON data as a native msgpack value.
// Data that is not canonical is canonicalised first; data that is not JSON
// at all (which no decoder produces) is written as nil.
func appendDataMsgpack(dst, data []byte) []byte {
	if !IsCanonical(data) {
		var err error
		if data, err = AppendCanonical(nil, data); err != nil {
			return append(dst, 0xc0)
		}
	}
	dst, _ = jsonToMp(dst, data, 0)
	return dst
}

// jsonToMp converts the canonical JSON value at b[i], returning the offset
// past it. Canonical input has no white space and is valid, with bounded
// depth, which keeps this simple.
func jsonToMp(dst, b []byte, i int) ([]byte, int) {
	switch c := b[i]; c {
	case '"':
		return jsonStringToMp(dst, b, i)
	case '{', '[':
		return jsonContainerToMp(dst, b, i)
	case 't':
		return append(dst, 0xc3), i + 4
	case 'f':
		return append(dst, 0xc2), i + 5
	case 'n':
		return append(dst, 0xc0), i + 4
	}
	end, _ := numberEnd(b, i)
	return jsonNumberToMp(dst, b[i:end]), end
}

func jsonStringToMp(dst, b []byte, i int) ([]byte, int) {
	end, _ := canonStringEnd(b, i)
	raw := b[i+1 : end-1]
	// The unescaped string is at most as long as raw: reserve a header for
	// that length and shrink it afterwards if needed.
	h := mpHeaderSize(mpStr, len(raw))
	at := len(dst)
	dst = append(dst, make([]byte, h)...)
	dst, _, _ = decodeString(dst, b, i)
	n := len(dst) - at - h
	return insertHeader(dst, at, h, mpStr, n), end
}

// insertHeader writes the header for n at dst[at:], where h bytes were
// reserved for it, moving the body if the header's size differs.
func insertHeader(dst []byte, at, h int, family mpFamily, n int) []byte {
	var buf [5]byte
	hdr := appendMpHeader(buf[:0], family, n)
	switch {
	case len(hdr) < h:
		dst = append(dst[:at+len(hdr)], dst[at+h:]...)
	case len(hdr) > h:
		dst = append(dst, make([]byte, len(hdr)-h)...)
		copy(dst[at+len(hdr):], dst[at+h:len(dst)-(len(hdr)-h)])
	}
	copy(dst[at:], hdr)
	return dst
}

// jsonContainerToMp converts an array or object, reserving a one-byte
// header (enough for up to 15 entries, the common case).
func jsonContainerToMp(dst, b []byte, i int) ([]byte, int) {
	family, closer := mpArray, byte(']')
	if b[i] == '{' {
		family, closer = mpMap, '}'
	}
	at := len(dst)
	dst = append(dst, 0)
	i++
	n := 0
	for b[i] != closer {
		if family == mpMap {
			dst, i = jsonStringToMp(dst, b, i)
			i++ // ':'
		}
		dst, i = jsonToMp(dst, b, i)
		n++
		if b[i] == ',' {
			i++
		}
	}
	return insertHeader(dst, at, 1, family, n), i + 1
}

// jsonNumberToMp writes a JSON number as a msgpack integer when it is
// written as an integer that fits in an int64 or a uint64, and as a
// float64 otherwise (-0 included, so that it survives the round trip).
func jsonNumberToMp(dst, raw []byte) []byte {
	n := jsonNum(raw)
	plainInt := true
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			plainInt = false
		}
	}
	if plainInt && n.exact && !n.big {
		switch {
		case !n.neg:
			return appendMpUint(dst, n.mag)
		case n.mag != 0 && n.mag <= 1<<63:
			return appendMpInt(dst, -int64(n.mag-1)-1)
		}
	}
	f, _ := strconv.ParseFloat(string(raw), 64)
	return binaryAppendFloat(dst, f)
}

func binaryAppendFloat(dst []byte, f float64) []byte {
	bits := math.Float64bits(f)
	return append(dst, 0xcb, byte(bits>>56), byte(bits>>48), byte(bits>>40), byte(bits>>32),
		byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits))
}
