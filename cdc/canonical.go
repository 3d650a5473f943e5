package cdc

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects (or msgpack arrays
// and maps) that a data value may have. Deeper values are rejected with an
// error rather than risking the stack.
const MaxDepth = 1000

// AppendCanonical validates value, one JSON value with optional surrounding
// white space, and appends its canonical encoding to dst (see the package
// documentation). When value is already canonical it is appended unchanged.
//
// It rejects what RFC 7493 (I-JSON) rejects, besides malformed JSON:
// duplicate object keys, invalid UTF-8 and lone surrogate escapes, since
// replacing them would make different inputs equal data. It also rejects
// nesting deeper than MaxDepth. On error dst is returned unchanged and the
// error names the problem and its byte offset in value.
func AppendCanonical(dst, value []byte) ([]byte, error) {
	start := skipWS(value, 0)
	if end, ok := canonEnd(value, start, 0); ok && skipWS(value, end) == len(value) {
		return append(dst, value[start:end]...), nil
	}
	w := canonWriter{src: value, members: make([]member, 0, 8)}
	out, end, err := w.value(dst, start, 0)
	if err == nil {
		if end = skipWS(value, end); end != len(value) {
			err = &jsonError{off: end, msg: "unexpected data after the value"}
		}
	}
	if err != nil {
		je := err.(*jsonError)
		return dst, errorf("malformed JSON at byte %d: %s", je.off, je.msg)
	}
	return out, nil
}

// IsCanonical reports whether b is exactly the canonical encoding of one
// JSON value, with no surrounding white space.
func IsCanonical(b []byte) bool {
	end, ok := canonEnd(b, 0, 0)
	return ok && end == len(b)
}

// jsonError is a problem with JSON text at byte offset off of its source.
type jsonError struct {
	off int
	msg string
}

func (e *jsonError) Error() string { return fmt.Sprintf("byte %d: %s", e.off, e.msg) }

// plain[c] is set for the bytes that stand for themselves in a canonical
// string: printable ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// canonEnd returns the end of the value that starts at b[i] and whether it
// is canonical and valid. ok=false means "not canonical, or not valid":
// the caller then takes the slow path, which tells which.
func canonEnd(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return canonStringEnd(b, i)
	case c == '-' || isDigit(c):
		end, msg := numberEnd(b, i)
		return end, msg == ""
	case c == '{':
		return canonObjectEnd(b, i, depth+1)
	case c == '[':
		return canonArrayEnd(b, i, depth+1)
	case c == 't':
		return literalEnd(b, i, "true")
	case c == 'f':
		return literalEnd(b, i, "false")
	case c == 'n':
		return literalEnd(b, i, "null")
	}
	return i, false
}

func literalEnd(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return i, false
}

// canonStringEnd checks a string for the canonical escapes: \" \\ \b \f \n
// \r \t and \u00XX (lower-case hex) for the other control characters, and
// valid UTF-8 for everything else.
func canonStringEnd(b []byte, i int) (int, bool) {
	j := i + 1
	for j < len(b) {
		c := b[j]
		if plain[c] {
			j++
			continue
		}
		switch {
		case c == '"':
			return j + 1, true
		case c == '\\':
			n := canonEscapeLen(b, j)
			if n == 0 {
				return j, false
			}
			j += n
		case c < 0x20:
			return j, false
		default:
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size == 1 {
				return j, false
			}
			j += size
		}
	}
	return j, false
}

// canonEscapeLen returns the length of the canonical escape at b[j], or 0.
func canonEscapeLen(b []byte, j int) int {
	if j+1 >= len(b) {
		return 0
	}
	switch b[j+1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if j+5 >= len(b) || b[j+2] != '0' || b[j+3] != '0' {
			return 0
		}
		hi, lo := b[j+4], b[j+5]
		if hi != '0' && hi != '1' {
			return 0
		}
		v := byte(0)
		switch {
		case lo >= '0' && lo <= '9':
			v = lo - '0'
		case lo >= 'a' && lo <= 'f':
			v = lo - 'a' + 10
		default:
			return 0
		}
		v += (hi - '0') << 4
		if shortEscape[v] != 0 {
			return 0
		}
		return 6
	}
	return 0
}

// shortEscape maps the control characters with a two-letter escape to its
// letter.
var shortEscape = [32]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

func canonObjectEnd(b []byte, i, depth int) (int, bool) {
	if depth > MaxDepth {
		return i, false
	}
	j := i + 1
	if j < len(b) && b[j] == '}' {
		return j + 1, true
	}
	var prev []byte
	for k := 0; ; k++ {
		if j >= len(b) || b[j] != '"' {
			return j, false
		}
		end, ok := canonStringEnd(b, j)
		if !ok {
			return end, false
		}
		key := b[j+1 : end-1]
		// Keys out of order or repeated take the slow path, which reports
		// duplicates.
		if k > 0 && compareEscaped(prev, key) >= 0 {
			return end, false
		}
		prev = key
		if end >= len(b) || b[end] != ':' {
			return end, false
		}
		if j, ok = canonEnd(b, end+1, depth); !ok {
			return j, false
		}
		if j < len(b) && b[j] == ',' {
			j++
			continue
		}
		if j < len(b) && b[j] == '}' {
			return j + 1, true
		}
		return j, false
	}
}

// compareEscaped compares the unescaped bytes of two canonically escaped
// string bodies. Every canonical escape stands for one ASCII byte.
func compareEscaped(a, b []byte) int {
	if bytes.IndexByte(a, '\\') < 0 && bytes.IndexByte(b, '\\') < 0 {
		return bytes.Compare(a, b)
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, na := unescapedByte(a, i)
		cb, nb := unescapedByte(b, j)
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		i, j = na, nb
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return 0
}

// unescapedByte returns the byte that s[i:] starts with once unescaped,
// and where the next one starts; s is a canonical string body.
func unescapedByte(s []byte, i int) (byte, int) {
	if s[i] != '\\' {
		return s[i], i + 1
	}
	switch e := s[i+1]; e {
	case 'b':
		return '\b', i + 2
	case 'f':
		return '\f', i + 2
	case 'n':
		return '\n', i + 2
	case 'r':
		return '\r', i + 2
	case 't':
		return '\t', i + 2
	case 'u':
		hi, _ := hex4(s, i+2)
		return byte(hi), i + 6
	default:
		return e, i + 2
	}
}

func canonArrayEnd(b []byte, i, depth int) (int, bool) {
	if depth > MaxDepth {
		return i, false
	}
	j := i + 1
	if j < len(b) && b[j] == ']' {
		return j + 1, true
	}
	for {
		var ok bool
		if j, ok = canonEnd(b, j, depth); !ok {
			return j, false
		}
		if j < len(b) && b[j] == ',' {
			j++
			continue
		}
		if j < len(b) && b[j] == ']' {
			return j + 1, true
		}
		return j, false
	}
}

// numberEnd matches the JSON number grammar at b[i]. It returns the end of
// the number, or where it went wrong and what is wrong.
func numberEnd(b []byte, i int) (int, string) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j++; j < len(b) && isDigit(b[j]); j++ {
		}
	default:
		return j, "expected a digit in number"
	}
	if j < len(b) && b[j] == '.' {
		j++
		if j >= len(b) || !isDigit(b[j]) {
			return j, "expected a digit after the decimal point"
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || !isDigit(b[j]) {
			return j, "expected a digit in the exponent"
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	return j, ""
}

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
