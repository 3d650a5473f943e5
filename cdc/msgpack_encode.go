package cdc

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrMsgpackInexact is wrapped by the error for data that msgpack cannot
// carry exactly: a number that a msgpack float64 would give back
// differently (0.10000000000000000001 and 0.1 both become 0.1; 7.0
// becomes 7; 1e400 becomes +Inf). Writing it would merge distinct data,
// so the output would contradict itself; such data can only be written as
// JSON Lines.
var ErrMsgpackInexact = errors.New("msgpack cannot carry the data exactly")

// AppendMsgpack appends m as a msgpack map of the same shape and keys as
// the JSON form, e.g. {"update":{"data":…,"time":7,"diff":1}}. Data is
// written as a native msgpack value converted from its canonical JSON:
// integers written without fraction or exponent that fit an int64 or
// uint64 as msgpack integers, other numbers as float64, strings as str,
// objects as maps with keys in canonical order, arrays, booleans and nil.
//
// ParseMsgpack gives back exactly the message written: data with a number
// that a float64 does not carry exactly (whose shortest form,
// strconv.FormatFloat(f, 'g', -1, 64), differs from the number as
// written) is refused with an error wrapping ErrMsgpackInexact and naming
// the message, and dst is returned unchanged. CheckMsgpack tells the same
// without encoding. m must be valid (see Message.Validate); invalid data is
// written as nil.
func AppendMsgpack(dst []byte, m *Message) ([]byte, error) {
	switch m.Kind {
	case KindUpdate:
		start := len(dst)
		dst = append(dst, 0x81)
		dst = appendMpStr(dst, "update")
		dst = append(dst, 0x83)
		dst = appendMpStr(dst, "data")
		var err error
		if dst, err = appendDataMsgpack(dst, m.Update.Data); err != nil {
			return dst[:start], inexact(m, err)
		}
		dst = appendMpStr(dst, "time")
		dst = appendMpUint(dst, m.Update.Time)
		dst = appendMpStr(dst, "diff")
		return appendMpInt(dst, m.Update.Diff), nil
	case KindProgress:
		return appendProgressMsgpack(dst, &m.Progress), nil
	case KindFinish:
		dst = append(dst, 0x81)
		dst = appendMpStr(dst, "finish")
		dst = append(dst, 0x81)
		dst = appendMpStr(dst, "time")
		return appendMpUint(dst, m.Finish.Time), nil
	}
	return append(dst, 0x80), nil
}

// CheckMsgpack returns the error AppendMsgpack would return for m, if
// any, without encoding it: only an update whose data holds a number that
// msgpack cannot carry exactly fails. It costs a scan of the data.
func CheckMsgpack(m *Message) error {
	if m.Kind != KindUpdate {
		return nil
	}
	data := m.Update.Data
	if len(data) > 0 && data[0] == '"' {
		return nil // a string holds no number
	}
	if !IsCanonical(data) {
		var err error
		if data, err = AppendCanonical(nil, data); err != nil {
			return nil // written as nil, see appendDataMsgpack
		}
	}
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c == '"':
			i, _ = canonStringEnd(data, i)
		case c == '-' || isDigit(c):
			end, _ := numberEnd(data, i)
			if err := mpNumberExact(data[i:end]); err != nil {
				return inexact(m, err)
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

// inexact wraps the reason data cannot be written as msgpack, naming m.
func inexact(m *Message, reason error) error {
	return fmt.Errorf("%v: %w: %v (write JSON Lines instead)", m, ErrMsgpackInexact, reason)
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

// appendDataMsgpack writes canonical JSON data as a native msgpack value,
// or fails with the reason it cannot be written exactly. Data that is not
// canonical is canonicalised first; data that is not JSON at all (which no
// decoder produces) is written as nil.
func appendDataMsgpack(dst, data []byte) ([]byte, error) {
	if !IsCanonical(data) {
		var err error
		if data, err = AppendCanonical(nil, data); err != nil {
			return append(dst, 0xc0), nil
		}
	}
	dst, _, err := jsonToMp(dst, data, 0)
	return dst, err
}

// jsonToMp converts the canonical JSON value at b[i], returning the offset
// past it. Canonical input has no white space and is valid, with bounded
// depth, which keeps this simple.
func jsonToMp(dst, b []byte, i int) ([]byte, int, error) {
	switch c := b[i]; c {
	case '"':
		dst, i = jsonStringToMp(dst, b, i)
		return dst, i, nil
	case '{', '[':
		return jsonContainerToMp(dst, b, i)
	case 't':
		return append(dst, 0xc3), i + 4, nil
	case 'f':
		return append(dst, 0xc2), i + 5, nil
	case 'n':
		return append(dst, 0xc0), i + 4, nil
	}
	end, _ := numberEnd(b, i)
	dst, err := jsonNumberToMp(dst, b[i:end])
	return dst, end, err
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
func jsonContainerToMp(dst, b []byte, i int) ([]byte, int, error) {
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
		var err error
		if dst, i, err = jsonToMp(dst, b, i); err != nil {
			return dst, i, err
		}
		n++
		if b[i] == ',' {
			i++
		}
	}
	return insertHeader(dst, at, 1, family, n), i + 1, nil
}

// jsonNumberToMp writes a JSON number as a msgpack integer when it is
// written as an integer that fits in an int64 or a uint64, and as a
// float64 otherwise (-0 included, so that it survives the round trip),
// or fails when the float64 would not give the number back as written.
func jsonNumberToMp(dst, raw []byte) ([]byte, error) {
	if v, neg, ok := mpInteger(raw); ok {
		if neg {
			return appendMpInt(dst, v), nil
		}
		return appendMpUint(dst, uint64(v)), nil
	}
	f, err := mpFloat(raw)
	if err != nil {
		return dst, err
	}
	return binaryAppendFloat(dst, f), nil
}

// mpInteger reports whether raw is written as an integer that a msgpack
// integer carries: v is its value (as uint64 bits when not neg).
func mpInteger(raw []byte) (v int64, neg, ok bool) {
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			return 0, false, false
		}
	}
	n := jsonNum(raw)
	switch {
	case !n.exact || n.big:
	case !n.neg:
		return int64(n.mag), false, true
	case n.mag != 0 && n.mag <= 1<<63:
		return -int64(n.mag-1) - 1, true, true
	}
	return 0, false, false
}

// mpFloat returns the float64 that carries raw, a number that is not a
// msgpack integer, when it gives raw back exactly: ParseMsgpack writes a
// float64 as strconv.FormatFloat(f, 'g', -1, 64).
func mpFloat(raw []byte) (float64, error) {
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil { // beyond float64's range: ±Inf, which JSON cannot hold
		return 0, fmt.Errorf("number %s is beyond the range of a float64", raw)
	}
	var buf [32]byte
	if back := strconv.AppendFloat(buf[:0], f, 'g', -1, 64); string(back) != string(raw) {
		return 0, fmt.Errorf("number %s would be read back as %s", raw, back)
	}
	return f, nil
}

// mpNumberExact reports why the number raw cannot be written as msgpack
// exactly, or nil.
func mpNumberExact(raw []byte) error {
	if _, _, ok := mpInteger(raw); ok {
		return nil
	}
	_, err := mpFloat(raw)
	return err
}

func binaryAppendFloat(dst []byte, f float64) []byte {
	bits := math.Float64bits(f)
	return append(dst, 0xcb, byte(bits>>56), byte(bits>>48), byte(bits>>40), byte(bits>>32),
		byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits))
}
