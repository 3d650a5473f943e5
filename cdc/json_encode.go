package cdc

import (
	"math/bits"
	"strconv"
)

// AppendJSON appends m in the primary compact JSON form, without a line end:
//
//	{"update":{"data":"k","time":7,"diff":1}}
//	{"progress":{"lower":5,"upper":8,"counts":[{"time":7,"count":2}]}}
//	{"finish":{"time":7}}
//
// An unbounded progress statement has no "upper"; one without counts has
// "counts":[]. Data is written as is, so m must be valid (see
// Message.Validate) for the output to decode; a message of unknown kind is
// written as {}, which decoders reject.
func AppendJSON(dst []byte, m *Message) []byte {
	switch m.Kind {
	case KindUpdate:
		dst = append(dst, fastUpdate...)
		dst = append(dst, m.Update.Data...)
		dst = append(dst, fastTime...)
		dst = appendUint(dst, m.Update.Time)
		dst = append(dst, fastDiff...)
		switch d := m.Update.Diff; {
		case d >= 0 && d < 10: // most diffs, written without a call
			return append(dst, byte('0'+d), '}', '}')
		case d < 0 && d > -10:
			return append(dst, '-', byte('0'-d), '}', '}')
		}
		dst = appendInt(dst, m.Update.Diff)
		return append(dst, "}}"...)
	case KindProgress:
		return appendProgressJSON(dst, &m.Progress)
	case KindFinish:
		dst = append(dst, fastFinish...)
		dst = appendUint(dst, m.Finish.Time)
		return append(dst, "}}"...)
	}
	return append(dst, "{}"...)
}

func appendProgressJSON(dst []byte, p *Progress) []byte {
	dst = append(dst, `{"progress":{"lower":`...)
	dst = appendUint(dst, p.Lower)
	if !p.Unbounded {
		dst = append(dst, `,"upper":`...)
		dst = appendUint(dst, p.Upper)
	}
	dst = append(dst, `,"counts":[`...)
	for k, c := range p.Counts {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"time":`...)
		dst = appendUint(dst, c.Time)
		dst = append(dst, `,"count":`...)
		if c.Count < 10 { // most counts, written without a call
			dst = append(dst, byte('0'+c.Count), '}')
			continue
		}
		dst = appendUint(dst, c.Count)
		dst = append(dst, '}')
	}
	return append(dst, "]}}"...)
}

// pairs holds "00" to "99", for appendUint, padded to 256 bytes so that
// indexing it with a byte needs no bounds check.
const pairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899" +
	"                                                        "

// pow10 holds the powers of ten up to 1e16, for appendUint (read only).
var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16}

// appendUint appends v in decimal, as strconv.AppendUint(dst, v, 10) does,
// writing the digits where they end up rather than into a buffer that is
// then copied: times and counts are most of what the JSON writer formats.
// The length comes from v's bit length, not a loop; below 1e8 the digits
// are worked out in 32 bits.
func appendUint(dst []byte, v uint64) []byte {
	if v < 10 {
		return append(dst, byte('0'+v))
	}
	if v >= 1e16 {
		return strconv.AppendUint(dst, v, 10)
	}
	// log10(2) is about 1233/4096: this is the number of digits or one
	// less, which the table tells.
	n := uint(bits.Len64(v)) * 1233 >> 12
	if v >= pow10[n] {
		n++
	}
	l := len(dst)
	if uint(cap(dst)-l) < n {
		dst = append(dst, make([]byte, n)...)
	} else {
		dst = dst[:l+int(n)]
	}
	d := dst[l:]
	i := n
	for v >= 1e8 {
		q := v / 100
		r := byte(v-q*100) * 2
		i -= 2
		d[i+1], d[i] = pairs[r+1], pairs[r]
		v = q
	}
	w := uint32(v)
	for w >= 100 {
		q := w / 100
		r := byte(w-q*100) * 2
		i -= 2
		d[i+1], d[i] = pairs[r+1], pairs[r]
		w = q
	}
	if w >= 10 {
		r := byte(w) * 2
		d[1], d[0] = pairs[r+1], pairs[r]
	} else {
		d[0] = byte('0' + w)
	}
	return dst
}

// appendInt appends v in decimal, as strconv.AppendInt(dst, v, 10) does.
func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		return appendNegative(dst, v)
	}
	return appendUint(dst, uint64(v))
}

func appendNegative(dst []byte, v int64) []byte {
	return appendUint(append(dst, '-'), uint64(-(v+1))+1) // -MinInt64 overflows
}
