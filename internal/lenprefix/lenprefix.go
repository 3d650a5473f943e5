// Package lenprefix appends length-prefixed values, encoding each value in
// place: the length goes in front as a uvarint, and the value is written
// once, where it ends up.
package lenprefix

import "encoding/binary"

// Append appends to dst the uvarint length of what appendValue appends to
// the slice it is given, followed by that value, and returns the extended
// slice. It keeps one byte for the length and widens it, moving the value,
// only for a value of 128 bytes or more: the rare case in cdclog's logs.
func Append(dst []byte, appendValue func([]byte) []byte) []byte {
	at := len(dst)
	dst = appendValue(append(dst, 0))
	n := len(dst) - at - 1
	if n < 0x80 {
		dst[at] = byte(n)
		return dst
	}
	return Widen(dst, at)
}

// Widen is Append's rare case, for a caller that appends in place without
// a function value: dst[at] is the byte kept for the length of the value
// after it, to the end of dst, which is 128 bytes or more; Widen writes
// the length there, moving the value to make room, and returns the slice.
// (The common case, a value under 128 bytes, is dst[at] = byte(length).)
func Widen(dst []byte, at int) []byte {
	n := len(dst) - at - 1
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(n))
	dst = append(dst, hdr[:h-1]...)
	copy(dst[at+h:], dst[at+1:at+1+n])
	copy(dst[at:], hdr[:h])
	return dst
}
