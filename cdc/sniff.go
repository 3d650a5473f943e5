package cdc

// Telling the formats apart. A stream read in the wrong format fails on
// its first message with an error about bytes that make no sense in that
// format ("invalid character byte 0x81", "message is not a map but an
// integer"); the reader adds that the message looks like one in the other
// format, so that the caller can say how to choose the format.

// sniffLimit bounds how far looksLikeJSON looks for the start of a JSON
// object past white space.
const sniffLimit = 64

// looksLikeMsgpack reports whether b begins as a msgpack message of the
// protocol does: a map header, then a string key that is one of the tags.
func looksLikeMsgpack(b []byte) bool {
	var i int
	switch {
	case len(b) == 0:
		return false
	case b[0] >= 0x81 && b[0] <= 0x8f: // fixmap, not empty
		i = 1
	case b[0] == 0xde: // map 16
		i = 3
	case b[0] == 0xdf: // map 32
		i = 5
	default:
		return false
	}
	var n int
	switch {
	case i < len(b) && b[i] >= 0xa0 && b[i] <= 0xbf: // fixstr
		n, i = int(b[i]&0x1f), i+1
	case i+1 < len(b) && b[i] == 0xd9: // str 8
		n, i = int(b[i+1]), i+2
	default:
		return false
	}
	if i+n > len(b) {
		return false
	}
	switch string(b[i : i+n]) {
	case "update", "progress", "finish":
		return true
	}
	return false
}

// looksLikeJSON reports whether b begins as a JSON Lines message does: an
// optional byte order mark and white space, '{', white space, then '"',
// within its first sniffLimit bytes. more is set instead when b is shorter
// and ends before that can be told.
func looksLikeJSON(b []byte) (yes, more bool) {
	w := b[:min(len(b), sniffLimit)]
	i := 0
	switch {
	case len(w) >= len(bom) && string(w[:len(bom)]) == string(bom):
		i = len(bom)
	case len(w) < len(bom) && string(bom[:len(w)]) == string(w):
		return false, true // a byte order mark, perhaps
	}
	for _, want := range []byte{'{', '"'} {
		if i = skipWS(w, i); i == len(w) {
			return false, len(b) < sniffLimit
		}
		if w[i] != want {
			return false, false
		}
		i++
	}
	return true, false
}
