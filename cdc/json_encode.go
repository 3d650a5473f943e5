package cdc

import (
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

// pairs holds "00" to "99", for appendUint.
const pairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendUint appends v in decimal, as strconv.AppendUint(dst, v, 10) does,
// writing the digits where they end up rather than into a buffer that is
// then copied: times and counts are most of what the JSON writer formats.
func appendUint(dst []byte, v uint64) []byte {
	if v < 10 {
		return append(dst, byte('0'+v))
	}
	if v >= 1e16 {
		return strconv.AppendUint(dst, v, 10)
	}
	n := 2
	for p := uint64(100); v >= p; p *= 10 {
		n++
	}
	l := len(dst)
	if cap(dst)-l < n {
		dst = append(dst, make([]byte, n)...)
	} else {
		dst = dst[:l+n]
	}
	i := l + n
	for v >= 100 {
		q := v / 100
		r := (v - q*100) * 2
		i -= 2
		dst[i], dst[i+1] = pairs[r], pairs[r+1]
		v = q
	}
	if v >= 10 {
		dst[i-2], dst[i-1] = pairs[v*2], pairs[v*2+1]
	} else {
		dst[i-1] = byte('0' + v)
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
