package cdc

import "strconv"

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
