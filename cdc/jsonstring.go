package cdc

import (
	"fmt"
	"unicode/utf8"
)

// JSON strings: decoding escapes and writing the canonical form.

// decodeString appends the unescaped content of the JSON string at src[i]
// to buf and returns the offset past its closing quote. It rejects invalid
// UTF-8, raw control characters and lone surrogates.
func decodeString(buf, src []byte, i int) ([]byte, int, error) {
	j := i + 1
	for {
		run := j
		for j < len(src) && plain[src[j]] {
			j++
		}
		buf = append(buf, src[run:j]...)
		if j >= len(src) {
			return buf, j, &jsonError{off: j, msg: "unexpected end of input in string"}
		}
		switch c := src[j]; {
		case c == '"':
			return buf, j + 1, nil
		case c == '\\':
			var err error
			if buf, j, err = decodeEscape(buf, src, j); err != nil {
				return buf, j, err
			}
		case c < 0x20:
			return buf, j, &jsonError{off: j, msg: fmt.Sprintf("%s in string (control characters must be escaped)", quoteChar(src, j))}
		default:
			r, size := utf8.DecodeRune(src[j:])
			if r == utf8.RuneError && size == 1 {
				return buf, j, &jsonError{off: j, msg: "invalid UTF-8 in string"}
			}
			buf = append(buf, src[j:j+size]...)
			j += size
		}
	}
}

// decodeEscape decodes the escape at src[j] (a backslash) into buf.
func decodeEscape(buf, src []byte, j int) ([]byte, int, error) {
	if j+1 >= len(src) {
		return buf, j + 1, &jsonError{off: j + 1, msg: "unexpected end of input in string escape"}
	}
	switch e := src[j+1]; e {
	case '"', '\\', '/':
		return append(buf, e), j + 2, nil
	case 'b':
		return append(buf, '\b'), j + 2, nil
	case 'f':
		return append(buf, '\f'), j + 2, nil
	case 'n':
		return append(buf, '\n'), j + 2, nil
	case 'r':
		return append(buf, '\r'), j + 2, nil
	case 't':
		return append(buf, '\t'), j + 2, nil
	case 'u':
		r, ok := hex4(src, j+2)
		if !ok {
			return buf, j, &jsonError{off: j, msg: "invalid \\u escape, expected four hex digits"}
		}
		if r >= 0xD800 && r < 0xDC00 && j+7 < len(src) && src[j+6] == '\\' && src[j+7] == 'u' {
			if lo, ok := hex4(src, j+8); ok && lo >= 0xDC00 && lo < 0xE000 {
				return utf8.AppendRune(buf, 0x10000+(r-0xD800)<<10+(lo-0xDC00)), j + 12, nil
			}
		}
		if r >= 0xD800 && r < 0xE000 {
			return buf, j, &jsonError{off: j, msg: fmt.Sprintf("lone surrogate %s in string", src[j:j+6])}
		}
		return utf8.AppendRune(buf, r), j + 6, nil
	}
	return buf, j, &jsonError{off: j, msg: fmt.Sprintf("invalid escape %s in string", quoteChar(src, j+1))}
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// appendQuoted appends s, valid UTF-8, as a canonical JSON string.
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	run := 0
	for k := 0; k < len(s); k++ {
		c := s[k]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[run:k]...)
		run = k + 1
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case shortEscape[c] != 0:
			dst = append(dst, '\\', shortEscape[c])
		default:
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}

// quoteChar describes the byte at b[i] for an error message.
func quoteChar(b []byte, i int) string {
	if i >= len(b) {
		return "end of input"
	}
	c := b[i]
	switch {
	case c == 0:
		return "NUL byte"
	case c < 0x20 || c == 0x7f:
		return fmt.Sprintf("control character 0x%02x", c)
	case c >= 0x80:
		r, _ := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError {
			return fmt.Sprintf("byte 0x%02x", c)
		}
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("'%c'", c)
}
