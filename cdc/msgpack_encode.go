package cdc

import (
	"math"
	"strconv"
)

// AppendMsgpack appends m as a msgpack map of the same shape and keys as
// the JSON form, e.g. {"update":{"data":…,"time":7,"diff":1}}. Data is
// written as a native msgpack value converted from its canonical JSON:
// integers written without fraction or exponent that fit an int64 or
// uint64 as msgpack integers, other numbers as float64 (so 7.0 comes back
// as 7, and numbers beyond float64's range become infinities, which
// ParseMsgpack rejects), strings as str, objects as maps with keys in
// canonical order, arrays, booleans and nil. m must be valid (see
// Message.Validate); invalid data is written as nil.
func AppendMsgpack(dst []byte, m *Message) []byte {
	switch m.Kind {
	case KindUpdate:
		dst = append(dst, 0x81)
		dst = appendMpStr(dst, "update")
		dst = append(dst, 0x83)
		dst = appendMpStr(dst, "data")
		dst = appendDataMsgpack(dst, m.Update.Data)
		dst = appendMpStr(dst, "time")
		dst = appendMpUint(dst, m.Update.Time)
		dst = appendMpStr(dst, "diff")
		return appendMpInt(dst, m.Update.Diff)
	case KindProgress:
		return appendProgressMsgpack(dst, &m.Progress)
	case KindFinish:
		dst = append(dst, 0x81)
		dst = appendMpStr(dst, "finish")
		dst = append(dst, 0x81)
		dst = appendMpStr(dst, "time")
		return appendMpUint(dst, m.Finish.Time)
	}
	return append(dst, 0x80)
}

func appendProgressMsgpack(dst []byte, p *Progress) []byte {
	dst = append(dst, 0x81)
	dst = appendMpStr(dst, "progress")
	if p.Unbounded {
		dst = append(dst, 0x82)
	} else {
		dst = append(dst, 0x83)
	}
	dst = appendMpStr(dst, "lower")
	dst = appendMpUint(dst, p.Lower)
	if !p.Unbounded {
		dst = appendMpStr(dst, "upper")
		dst = appendMpUint(dst, p.Upper)
	}
	dst = appendMpStr(dst, "counts")
	dst = appendMpHeader(dst, mpArray, len(p.Counts))
	for _, c := range p.Counts {
		dst = append(dst, 0x82)
		dst = appendMpStr(dst, "time")
		dst = appendMpUint(dst, c.Time)
		dst = appendMpStr(dst, "count")
		dst = appendMpUint(dst, c.Count)
	}
	return dst
}

// Data: canonical JSON converted to native msgpack values.

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
