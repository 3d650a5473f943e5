package streamgen

import "strconv"

// objectEvery makes every fifth key (4, 9, 14, ...) an object, so that
// streams carry structured data as well as strings.
const objectEvery = 5

// keyData returns the canonical JSON encoding of key i: the string
// "key-<i>" for most keys, and the object {"id":<i>,"name":"k<i>"} for
// every fifth one. Each call returns a fresh slice.
func keyData(i int) []byte {
	if i%objectEvery == objectEvery-1 {
		b := make([]byte, 0, 32)
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"name":"k`...)
		b = strconv.AppendInt(b, int64(i), 10)
		return append(b, `"}`...)
	}
	b := make([]byte, 0, 16)
	b = append(b, `"key-`...)
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, '"')
}
