package ordering

import (
	"bytes"
	"encoding/json"
)

// A small scanner over JSON text already known to be valid (json.Valid):
// it walks one object's members without decoding the values it skips, so
// finding a record's key costs no allocation for the rest of the record.

// members holds the raw values of the two members an object was searched
// for; nil means absent (a present JSON value is never empty).
type members [2][]byte

// findMembers returns the raw values of the members named a and b of the
// object in data, keeping the last of duplicate names (as encoding/json
// does). ok is false when data is not an object.
func findMembers(data []byte, a, b string) (found members, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return found, false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
		if i >= len(data) || data[i] != '"' {
			// '}' ends a valid object; anything else cannot happen in
			// valid JSON, and is "not an object" rather than a panic.
			return found, i < len(data) && data[i] == '}'
		}
		keyEnd := skipString(data, i)
		name := data[i:keyEnd]
		i = skipSpace(data, keyEnd)
		i = skipSpace(data, i+1) // past ':'
		if i >= len(data) {
			return found, false
		}
		valEnd := skipValue(data, i)
		switch {
		case nameIs(name, a):
			found[0] = data[i:valEnd]
		case nameIs(name, b):
			found[1] = data[i:valEnd]
		}
		i = valEnd
	}
}

// nameIs compares a key token (with its quotes) to name, decoding the
// token only when it has escapes.
func nameIs(token []byte, name string) bool {
	if len(token) < 2 {
		return false
	}
	raw := token[1 : len(token)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	var s string
	return json.Unmarshal(token, &s) == nil && s == name
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string token starting at i.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the value starting at i.
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}
