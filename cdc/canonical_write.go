package cdc

import (
	"bytes"
	"fmt"
	"slices"
)

// The slow path of canonicalisation: rewriting JSON that is not canonical
// (or not valid, which it reports precisely).

// canonWriter writes the canonical encoding of JSON text src, validating it.
// Its buffers are reused across the values it writes.
type canonWriter struct {
	src     []byte
	members []member // a stack: each open object's members
	str     []byte   // scratch for a decoded string value
	sortBuf []byte   // scratch for reordering members
}

// member is one object member already written to dst[start:end] as
// "key":value; key is its unescaped name, srcOff where it was read.
type member struct {
	key        []byte
	start, end int
	srcOff     int
}

func (w *canonWriter) fail(off int, format string, args ...any) error {
	return &jsonError{off: off, msg: fmt.Sprintf(format, args...)}
}

// value appends the canonical encoding of the value at src[i] (after
// optional white space) and returns the offset just past it.
func (w *canonWriter) value(dst []byte, i, depth int) ([]byte, int, error) {
	i = skipWS(w.src, i)
	if i >= len(w.src) {
		return dst, i, w.fail(i, "unexpected end of input, expected a value")
	}
	switch c := w.src[i]; {
	case c == '"':
		var err error
		if w.str, i, err = decodeString(w.str[:0], w.src, i); err != nil {
			return dst, i, err
		}
		return appendQuoted(dst, w.str), i, nil
	case c == '-' || isDigit(c):
		end, msg := numberEnd(w.src, i)
		if msg != "" {
			return dst, end, w.fail(end, "%s", msg)
		}
		return append(dst, w.src[i:end]...), end, nil
	case c == '{':
		return w.object(dst, i, depth+1)
	case c == '[':
		return w.array(dst, i, depth+1)
	case c == 't' || c == 'f' || c == 'n':
		lit := "null"
		switch c {
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		}
		end, ok := literalEnd(w.src, i, lit)
		if !ok {
			return dst, i, w.fail(i, "invalid literal, expected %s", lit)
		}
		return append(dst, lit...), end, nil
	}
	return dst, i, w.fail(i, "invalid character %s, expected a value", quoteChar(w.src, i))
}

func (w *canonWriter) array(dst []byte, i, depth int) ([]byte, int, error) {
	if depth > MaxDepth {
		return dst, i, w.fail(i, "nesting deeper than %d levels", MaxDepth)
	}
	dst = append(dst, '[')
	i = skipWS(w.src, i+1)
	if i < len(w.src) && w.src[i] == ']' {
		return append(dst, ']'), i + 1, nil
	}
	for {
		var err error
		if dst, i, err = w.value(dst, i, depth); err != nil {
			return dst, i, err
		}
		i = skipWS(w.src, i)
		if i >= len(w.src) {
			return dst, i, w.fail(i, "unexpected end of input in array")
		}
		switch w.src[i] {
		case ',':
			dst = append(dst, ',')
			i++
		case ']':
			return append(dst, ']'), i + 1, nil
		default:
			return dst, i, w.fail(i, "invalid character %s in array, expected ',' or ']'", quoteChar(w.src, i))
		}
	}
}

func (w *canonWriter) object(dst []byte, i, depth int) ([]byte, int, error) {
	if depth > MaxDepth {
		return dst, i, w.fail(i, "nesting deeper than %d levels", MaxDepth)
	}
	dst = append(dst, '{')
	body := len(dst)
	base := len(w.members)
	defer func() { w.members = w.members[:base] }()
	i = skipWS(w.src, i+1)
	if i < len(w.src) && w.src[i] == '}' {
		return append(dst, '}'), i + 1, nil
	}
	for {
		var err error
		var key []byte
		keyOff := i
		if key, i, err = w.key(i); err != nil {
			return dst, i, err
		}
		start := len(dst)
		dst = append(appendQuoted(dst, key), ':')
		if dst, i, err = w.value(dst, i, depth); err != nil {
			return dst, i, err
		}
		w.members = append(w.members, member{key: key, start: start, end: len(dst), srcOff: keyOff})
		i = skipWS(w.src, i)
		if i >= len(w.src) {
			return dst, i, w.fail(i, "unexpected end of input in object")
		}
		switch w.src[i] {
		case ',':
			dst = append(dst, ',')
			i = skipWS(w.src, i+1)
		case '}':
			dst, err = w.sortMembers(dst, body, w.members[base:])
			return append(dst, '}'), i + 1, err
		default:
			return dst, i, w.fail(i, "invalid character %s in object, expected ',' or '}'", quoteChar(w.src, i))
		}
	}
}

// key reads an object key and its colon. The key aliases src when it has
// no escapes.
func (w *canonWriter) key(i int) ([]byte, int, error) {
	if i >= len(w.src) {
		return nil, i, w.fail(i, "unexpected end of input, expected a string key")
	}
	if w.src[i] != '"' {
		return nil, i, w.fail(i, "invalid character %s, expected a string key", quoteChar(w.src, i))
	}
	key, end, err := readKey(w.src, i)
	if err != nil {
		return nil, end, err
	}
	end = skipWS(w.src, end)
	if end >= len(w.src) || w.src[end] != ':' {
		if end >= len(w.src) {
			return nil, end, w.fail(end, "unexpected end of input, expected ':' after object key")
		}
		return nil, end, w.fail(end, "invalid character %s after object key, expected ':'", quoteChar(w.src, end))
	}
	return key, end + 1, nil
}

// readKey reads the string at src[i]: it aliases src when the string has no
// escapes, and is a fresh copy otherwise.
func readKey(src []byte, i int) ([]byte, int, error) {
	j := i + 1
	for j < len(src) && plain[src[j]] {
		j++
	}
	if j < len(src) && src[j] == '"' {
		return src[i+1 : j : j], j + 1, nil
	}
	return decodeString(nil, src, i)
}

// sortMembers puts the members written in dst[body:] in key order and
// rejects duplicate keys.
func (w *canonWriter) sortMembers(dst []byte, body int, ms []member) ([]byte, error) {
	return sortMembers(dst, body, ms, &w.sortBuf, func(m member) error {
		return w.fail(m.srcOff, "duplicate key %q in object", m.key)
	})
}

// sortMembers reorders the members written in dst[body:], comma separated,
// by key, using *scratch; dup reports the later of two equal keys.
func sortMembers(dst []byte, body int, ms []member, scratch *[]byte, dup func(member) error) ([]byte, error) {
	sorted := true
	for k := 1; k < len(ms); k++ {
		switch c := bytes.Compare(ms[k-1].key, ms[k].key); {
		case c == 0:
			return dst, dup(ms[k])
		case c > 0:
			sorted = false
		}
	}
	if sorted {
		return dst, nil
	}
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	for k := 1; k < len(ms); k++ {
		if bytes.Equal(ms[k-1].key, ms[k].key) {
			later := ms[k]
			if ms[k-1].srcOff > later.srcOff {
				later = ms[k-1]
			}
			return dst, dup(later)
		}
	}
	*scratch = append((*scratch)[:0], dst[body:]...)
	dst = dst[:body]
	for k, m := range ms {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, (*scratch)[m.start-body:m.end-body]...)
	}
	return dst, nil
}
