package cdc

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// The msgpack wire primitives, reading and writing, shared by the msgpack
// and binary codecs.

// truncatedError reports a msgpack value cut short; it wraps
// io.ErrUnexpectedEOF so that readers know more input may complete it.
type truncatedError struct{}

func (truncatedError) Error() string { return "truncated msgpack message" }
func (truncatedError) Unwrap() error { return io.ErrUnexpectedEOF }

var errTruncated error = truncatedError{}

// mpDecoder reads msgpack values from b, starting at i.
type mpDecoder struct {
	b []byte
	i int
	// slab, when set, is where converted data is built: a block that is
	// only ever appended to, so data handed out is never overwritten.
	slab *[]byte
	// record, when set, reads a stored record (CheckMsgpackBounds), not a
	// message: no length is held to MaxMessageSize, but no array or map
	// may claim more values than there are bytes left.
	record bool
}

// dataSlab is the size of the blocks a Reader builds msgpack data in.
const dataSlab = 64 << 10

// dataBuf returns an empty buffer for converted data with room for n
// bytes: the free tail of the slab, or a fresh buffer without one.
func (d *mpDecoder) dataBuf(n int) []byte {
	if d.slab == nil {
		return make([]byte, 0, n)
	}
	if cap(*d.slab)-len(*d.slab) < n {
		*d.slab = make([]byte, 0, max(dataSlab, n))
	}
	s := *d.slab
	return s[len(s):len(s):cap(s)]
}

// kept marks data, built in a buffer from dataBuf, as used: when it still
// lies in the slab's tail (it did not outgrow it) the slab moves past it.
func (d *mpDecoder) kept(data []byte) []byte {
	if d.slab == nil || len(data) == 0 {
		return data
	}
	s := *d.slab
	if tail := s[len(s):cap(s)]; cap(tail) > 0 && cap(data) == cap(tail) && &data[:1][0] == &tail[:1][0] {
		*d.slab = s[:len(s)+len(data)]
	}
	return data[:len(data):len(data)]
}

// malformed reports bytes that are not msgpack at all.
func (d *mpDecoder) malformed(at int, format string, args ...any) error {
	return errorf("malformed msgpack at byte %d of the message: %s", at, fmt.Sprintf(format, args...))
}

// need checks that n more bytes are there.
func (d *mpDecoder) need(n int) error {
	if len(d.b)-d.i < n {
		return errTruncated
	}
	return nil
}

// peek returns the type byte of the next value without consuming it.
func (d *mpDecoder) peek() (byte, error) {
	if d.i >= len(d.b) {
		return 0, errTruncated
	}
	return d.b[d.i], nil
}

// uintN reads an n-byte big-endian unsigned integer at d.b[d.i].
func (d *mpDecoder) uintN(n int) (uint64, error) {
	if err := d.need(n); err != nil {
		return 0, err
	}
	p := d.b[d.i : d.i+n]
	d.i += n
	switch n {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(p)), nil
	}
	return binary.BigEndian.Uint64(p), nil
}

// length reads a length of n bytes for the value whose type byte is at
// start, rejecting lengths no message may have.
func (d *mpDecoder) length(n, start int) (int, error) {
	l, err := d.uintN(n)
	if err != nil {
		return 0, err
	}
	if l > MaxMessageSize && !d.record {
		return 0, d.malformed(start, "length %d exceeds the %d MiB message limit", l, MaxMessageSize>>20)
	}
	return int(l), nil
}

// header reads the type byte of a container or byte string and returns
// its family and length (elements, pairs or bytes). For other values it
// returns family mpOther and consumes only the type byte.
func (d *mpDecoder) header() (family mpFamily, n int, err error) {
	start := d.i
	c, err := d.peek()
	if err != nil {
		return 0, 0, err
	}
	d.i++
	switch {
	case c >= 0x80 && c <= 0x8f:
		return mpMap, int(c & 0x0f), nil
	case c >= 0x90 && c <= 0x9f:
		return mpArray, int(c & 0x0f), nil
	case c >= 0xa0 && c <= 0xbf:
		return mpStr, int(c & 0x1f), nil
	}
	var size int
	switch c {
	case 0xd9, 0xc4:
		size = 1
	case 0xda, 0xc5, 0xdc, 0xde:
		size = 2
	case 0xdb, 0xc6, 0xdd, 0xdf:
		size = 4
	default:
		return mpOther, 0, nil
	}
	if n, err = d.length(size, start); err != nil {
		return 0, 0, err
	}
	switch c {
	case 0xd9, 0xda, 0xdb:
		family = mpStr
	case 0xc4, 0xc5, 0xc6:
		family = mpBin
	case 0xdc, 0xdd:
		family = mpArray
	default:
		family = mpMap
	}
	return family, n, nil
}

type mpFamily uint8

const (
	mpOther mpFamily = iota
	mpMap
	mpArray
	mpStr
	mpBin
)

// bytes returns the next n bytes, aliasing d.b.
func (d *mpDecoder) bytes(n int) ([]byte, error) {
	if err := d.need(n); err != nil {
		return nil, err
	}
	p := d.b[d.i : d.i+n : d.i+n]
	d.i += n
	return p, nil
}

// kind names the type of the next value for error messages, or "" when
// its type byte is not msgpack.
func (d *mpDecoder) kind() string {
	if d.i >= len(d.b) {
		return "nothing"
	}
	switch c := d.b[d.i]; {
	case c <= 0x7f || c >= 0xe0 || (c >= 0xcc && c <= 0xd3):
		return "an integer"
	case c <= 0x8f || c == 0xde || c == 0xdf:
		return "a map"
	case c <= 0x9f || c == 0xdc || c == 0xdd:
		return "an array"
	case c <= 0xbf || (c >= 0xd9 && c <= 0xdb):
		return "a string"
	case c == 0xc0:
		return "nil"
	case c == 0xc2 || c == 0xc3:
		return "a boolean"
	case c >= 0xc4 && c <= 0xc6:
		return "binary data"
	case c == 0xca || c == 0xcb:
		return "a float"
	case c == 0xc1:
		return ""
	}
	return "an extension"
}

// number reads an integer or float; ok is false (and nothing is consumed)
// when the next value is something else.
func (d *mpDecoder) number() (n num, ok bool, err error) {
	c, err := d.peek()
	if err != nil {
		return num{}, false, err
	}
	switch {
	case c <= 0x7f:
		d.i++
		return num{exact: true, mag: uint64(c)}, true, nil
	case c >= 0xe0:
		d.i++
		return intNum(int64(int8(c))), true, nil
	case c >= 0xcc && c <= 0xcf:
		d.i++
		v, err := d.uintN(1 << (c - 0xcc))
		return num{exact: true, mag: v}, err == nil, err
	case c >= 0xd0 && c <= 0xd3:
		d.i++
		size := 1 << (c - 0xd0)
		v, err := d.uintN(size)
		shift := 64 - 8*size
		return intNum(int64(v<<shift) >> shift), err == nil, err
	case c == 0xca:
		d.i++
		v, err := d.uintN(4)
		return floatNum(float64(math.Float32frombits(uint32(v)))), err == nil, err
	case c == 0xcb:
		d.i++
		v, err := d.uintN(8)
		return floatNum(math.Float64frombits(v)), err == nil, err
	}
	return num{}, false, nil
}

func intNum(v int64) num {
	if v < 0 {
		return num{exact: true, neg: true, mag: uint64(-(v + 1)) + 1}
	}
	return num{exact: true, mag: uint64(v)}
}

// mpSkip moves past pending values starting at b[i], iteratively, so any
// nesting is fine; it tells a reader the extent of a message it could not
// decode. When b ends first it returns a truncation error with the offset
// of the value it could not finish and the values still pending from
// there, so that a later call with more bytes can resume.
func mpSkip(b []byte, i, pending int) (int, int, error) {
	d := mpDecoder{b: b, i: i}
	return d.skip(pending)
}

// skip is mpSkip from d's position.
func (d *mpDecoder) skip(pending int) (int, int, error) {
	for ; pending > 0; pending-- {
		start := d.i
		family, n, err := d.header()
		if err == nil {
			switch family {
			case mpMap:
				n *= 2
				fallthrough
			case mpArray:
				pending += n
				switch {
				case d.record && pending-1 > len(d.b)-d.i: // pending-1 values follow this header
					err = d.malformed(start, "a container of %d values with %d bytes left", n, len(d.b)-d.i)
				case !d.record && pending > MaxMessageSize:
					err = d.malformed(start, "more than %d values", MaxMessageSize)
				}
			case mpStr, mpBin:
				_, err = d.bytes(n)
			default:
				err = d.skipScalar(d.b[start], start)
			}
		}
		if isTruncated(err) {
			return start, pending, err
		}
		if err != nil {
			return d.i, pending, err
		}
	}
	return d.i, 0, nil
}

// skipScalar moves past the payload of a value other than a container or
// byte string, whose type byte c (at start) is already consumed.
func (d *mpDecoder) skipScalar(c byte, start int) error {
	size := 0
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
	case c >= 0xcc && c <= 0xcf:
		size = 1 << (c - 0xcc)
	case c >= 0xd0 && c <= 0xd3:
		size = 1 << (c - 0xd0)
	case c == 0xca:
		size = 4
	case c == 0xcb:
		size = 8
	case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16
		size = 1 + 1<<(c-0xd4)
	case c >= 0xc7 && c <= 0xc9: // ext 8, 16, 32
		n, err := d.length(1<<(c-0xc7), start)
		if err != nil {
			return err
		}
		size = 1 + n
	default:
		return d.malformed(start, "invalid type byte 0x%02x", c)
	}
	_, err := d.bytes(size)
	return err
}

// Writing.

func appendMpUint(dst []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(dst, byte(v))
	case v <= math.MaxUint8:
		return append(dst, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return append(dst, 0xcd, byte(v>>8), byte(v))
	case v <= math.MaxUint32: // one append rather than two: times are mostly here
		return append(dst, 0xce, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xcf), v)
}

func appendMpInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendMpUint(dst, uint64(v))
	case v >= -32:
		return append(dst, byte(v))
	case v >= math.MinInt8:
		return append(dst, 0xd0, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, 0xd1), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(v))
}

// appendMpHeader writes the header of a container or byte string of n
// elements, pairs or bytes.
func appendMpHeader(dst []byte, family mpFamily, n int) []byte {
	var fix, fixMax byte
	var c8, c16, c32 byte
	switch family {
	case mpMap:
		fix, fixMax, c16, c32 = 0x80, 15, 0xde, 0xdf
	case mpArray:
		fix, fixMax, c16, c32 = 0x90, 15, 0xdc, 0xdd
	case mpStr:
		fix, fixMax, c8, c16, c32 = 0xa0, 31, 0xd9, 0xda, 0xdb
	case mpBin:
		c8, c16, c32 = 0xc4, 0xc5, 0xc6
	}
	switch {
	case n <= int(fixMax) && fix != 0:
		return append(dst, fix|byte(n))
	case n <= math.MaxUint8 && c8 != 0:
		return append(dst, c8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, c16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, c32), uint32(n))
}

// mpHeaderSize is the size of appendMpHeader's output.
func mpHeaderSize(family mpFamily, n int) int {
	var buf [5]byte
	return len(appendMpHeader(buf[:0], family, n))
}

// appendMpStr writes s as a msgpack str.
func appendMpStr(dst []byte, s string) []byte {
	return append(appendMpHeader(dst, mpStr, len(s)), s...)
}
