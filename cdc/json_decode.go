package cdc

import (
	"fmt"
)

// ParseJSON decodes one JSON Lines message (a line without its line end;
// white space around it is allowed) into *m, overwriting every field.
//
// m.Update.Data aliases line when the data is already canonical (with its
// capacity capped, so appending to it cannot clobber line), and is a fresh
// buffer otherwise. m.Progress.Counts is always freshly allocated, or nil
// when there are no counts, so it never aliases an earlier message's.
//
// Besides the primary shapes it accepts the variants listed in the package
// documentation. Errors say what is wrong and, for malformed JSON, at which
// column (1-based, in bytes); on error *m is the zero Message.
func ParseJSON(line []byte, m *Message) error {
	return parseJSON(line, m, nil)
}

// parseJSON is ParseJSON keeping the fast path's counts in slab, when not
// nil.
func parseJSON(line []byte, m *Message, slab *[]Count) error {
	if parseJSONFast(line, m, slab) {
		return nil
	}
	if err := parseJSONGeneral(line, m); err != nil {
		*m = Message{}
		return err
	}
	return nil
}

// parseJSONGeneral is the decoder for every shape; parseJSONFast handles
// the compact shapes that cdclog writes and must agree with it.
func parseJSONGeneral(line []byte, m *Message) error {
	d := jsonDecoder{b: line}
	d.ws()
	if d.i >= len(d.b) {
		return errorf("empty message")
	}
	if d.b[d.i] != '{' {
		if kind := d.kind(); kind != "" {
			return errorf("message is not a JSON object but %s", kind)
		}
		return d.syntax("invalid character %s, expected '{'", quoteChar(d.b, d.i))
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		return errorf("message has no tag " + tagsWanted)
	}
	tag, err := d.key()
	if err != nil {
		return err
	}
	switch string(tag) {
	case "update":
		err = d.update(m)
	case "progress":
		err = d.progress(m)
	case "finish":
		err = d.finish(m)
	default:
		return errorf("unknown tag %q "+tagsWanted, tag)
	}
	if err != nil {
		return err
	}
	return d.end(tag)
}

// end reads the rest of the line after the tag's value.
func (d *jsonDecoder) end(tag []byte) error {
	d.ws()
	if d.i >= len(d.b) {
		return d.syntax("unexpected end of line, expected '}'")
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		d.ws()
		other, err := d.key()
		if err != nil {
			return err
		}
		return errorf("more than one tag (%q and %q)", tag, other)
	case '}':
		d.i++
	default:
		return d.syntax("invalid character %s after the message body, expected '}'", quoteChar(d.b, d.i))
	}
	if d.ws(); d.i != len(d.b) {
		return d.syntax("unexpected %s after the message", quoteChar(d.b, d.i))
	}
	return nil
}

// jsonDecoder reads one message from b; i is the read offset.
type jsonDecoder struct {
	b []byte
	i int
}

func (d *jsonDecoder) ws() { d.i = skipWS(d.b, d.i) }

// syntax reports malformed JSON at the read offset.
func (d *jsonDecoder) syntax(format string, args ...any) error {
	return d.syntaxAt(d.i, fmt.Sprintf(format, args...))
}

func (d *jsonDecoder) syntaxAt(off int, msg string) error {
	return errorf("malformed JSON at column %d: %s", off+1, msg)
}

// wrap turns a *jsonError from the canonical JSON code into a message
// error with a column.
func (d *jsonDecoder) wrap(err error) error {
	if je, ok := err.(*jsonError); ok {
		return d.syntaxAt(je.off, je.msg)
	}
	return err
}

// kind names the JSON type of the value at the read offset, or "" when no
// value starts there.
func (d *jsonDecoder) kind() string {
	if d.i >= len(d.b) {
		return ""
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == '-' || isDigit(c):
		return "a number"
	case c == 't' || c == 'f' || c == 'n':
		// Only a whole literal is a value: "nope" is malformed, not null.
		for _, l := range [...]struct{ lit, kind string }{{"true", "a boolean"}, {"false", "a boolean"}, {"null", "null"}} {
			if _, ok := literalEnd(d.b, d.i, l.lit); ok {
				return l.kind
			}
		}
	}
	return ""
}

// key reads an object key, the colon after it and the white space after
// that. The key aliases b unless it has escapes.
func (d *jsonDecoder) key() ([]byte, error) {
	if d.i >= len(d.b) {
		return nil, d.syntax("unexpected end of line, expected a string key")
	}
	if d.b[d.i] != '"' {
		return nil, d.syntax("invalid character %s, expected a string key", quoteChar(d.b, d.i))
	}
	key, end, err := readKey(d.b, d.i)
	if err != nil {
		return nil, d.wrap(err)
	}
	d.i = skipWS(d.b, end)
	if d.i >= len(d.b) {
		return nil, d.syntax("unexpected end of line, expected ':' after object key")
	}
	if d.b[d.i] != ':' {
		return nil, d.syntax("invalid character %s after object key, expected ':'", quoteChar(d.b, d.i))
	}
	d.i++
	d.ws()
	return key, nil
}

// open reads the '{' that starts the object what is about ("update: ").
func (d *jsonDecoder) open(what string) error {
	if d.i < len(d.b) && d.b[d.i] == '{' {
		d.i++
		d.ws()
		return nil
	}
	return d.wrongType(what, "", "an object")
}

// wrongType reports a value of the wrong JSON type, or malformed JSON when
// no value starts at the read offset.
func (d *jsonDecoder) wrongType(what, field, want string) error {
	kind := d.kind()
	if kind == "" {
		if d.i >= len(d.b) {
			return d.syntax("unexpected end of line, expected a value")
		}
		return d.syntax("invalid character %s, expected a value", quoteChar(d.b, d.i))
	}
	if field != "" {
		return errorf("%s%q must be %s, not %s", what, field, want, kind)
	}
	return errorf("%smust be %s, not %s", what, want, kind)
}

// empty reports whether the object whose '{' has been read is empty, and
// consumes its '}' if so.
func (d *jsonDecoder) empty() bool {
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return true
	}
	return false
}

// next reads the separator after a member's value or an element and
// reports whether another follows before closer.
func (d *jsonDecoder) next(closer byte) (more bool, err error) {
	d.ws()
	if d.i >= len(d.b) {
		return false, d.syntax("unexpected end of line, expected ',' or '%c'", closer)
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		d.ws()
		return true, nil
	case closer:
		d.i++
		return false, nil
	}
	return false, d.syntax("invalid character %s, expected ',' or '%c'", quoteChar(d.b, d.i), closer)
}

// number reads a JSON number for field of what.
func (d *jsonDecoder) number(what, field string) (num, error) {
	if d.i >= len(d.b) || (d.b[d.i] != '-' && !isDigit(d.b[d.i])) {
		return num{}, d.wrongType(what, field, "a number")
	}
	end, msg := numberEnd(d.b, d.i)
	if msg != "" {
		return num{}, d.syntaxAt(end, msg)
	}
	n := jsonNum(d.b[d.i:end])
	d.i = end
	return n, nil
}

// plainEnd reports whether a number read by fastUint or fastInt ends at
// b[end], rather than going on with a fraction, an exponent or (after a
// leading zero) more digits.
func plainEnd(b []byte, end int) bool {
	if end >= len(b) {
		return true
	}
	c := b[end]
	return c != '.' && c != 'e' && c != 'E' && !isDigit(c)
}

func (d *jsonDecoder) uint(what, field string) (uint64, error) {
	if v, end, ok := fastUint(d.b, d.i); ok && plainEnd(d.b, end) {
		d.i = end
		return v, nil
	}
	n, err := d.number(what, field)
	if err != nil {
		return 0, err
	}
	return n.asUint(what, field)
}

// data reads a data value: it aliases b when canonical, else it is
// rewritten into a fresh buffer.
func (d *jsonDecoder) data() ([]byte, error) {
	if end, ok := canonEnd(d.b, d.i, 0); ok {
		data := d.b[d.i:end:end]
		d.i = end
		return data, nil
	}
	w := canonWriter{src: d.b, members: make([]member, 0, 8)}
	data, end, err := w.value(make([]byte, 0, len(d.b)-d.i), d.i, 0)
	if err != nil {
		return nil, d.wrap(err)
	}
	d.i = end
	return data, nil
}

func (d *jsonDecoder) update(m *Message) error {
	if err := d.open(inUpdate); err != nil {
		return err
	}
	var f updateFields
	for more := !d.empty(); more; {
		key, err := d.key()
		if err != nil {
			return err
		}
		var bit uint8
		switch string(key) {
		case "data":
			bit = fData
			if f.seen&bit == 0 {
				f.u.Data, err = d.data()
			}
		case "time":
			bit = fTime
			if f.seen&bit == 0 {
				f.u.Time, err = d.uint(inUpdate, "time")
			}
		case "diff":
			bit = fDiff
			if f.seen&bit == 0 {
				f.u.Diff, err = d.diff()
			}
		default:
			return unknownField(inUpdate, key, `"data", "time" and "diff"`)
		}
		if f.seen&bit != 0 {
			return duplicate(inUpdate, string(key))
		}
		if err != nil {
			return err
		}
		f.seen |= bit
		if more, err = d.next('}'); err != nil {
			return err
		}
	}
	return f.build(m)
}

func (d *jsonDecoder) finish(m *Message) error {
	if err := d.open(inFinish); err != nil {
		return err
	}
	var seen bool
	var t uint64
	for more := !d.empty(); more; {
		key, err := d.key()
		if err != nil {
			return err
		}
		if string(key) != "time" {
			return unknownField(inFinish, key, `"time"`)
		}
		if seen {
			return duplicate(inFinish, "time")
		}
		seen = true
		if t, err = d.uint(inFinish, "time"); err != nil {
			return err
		}
		if more, err = d.next('}'); err != nil {
			return err
		}
	}
	if !seen {
		return errorf(inFinish + `missing "time"`)
	}
	*m = Message{Kind: KindFinish, Finish: Finish{Time: t}}
	return nil
}

func (d *jsonDecoder) diff() (int64, error) {
	if v, end, ok := fastInt(d.b, d.i); ok && v != 0 && plainEnd(d.b, end) {
		d.i = end
		return v, nil
	}
	n, err := d.number(inUpdate, "diff")
	if err != nil {
		return 0, err
	}
	return n.asDiff(inUpdate)
}

// The general JSON decoder's progress statements.

func (d *jsonDecoder) progress(m *Message) error {
	if err := d.open(inProgress); err != nil {
		return err
	}
	var p progressFields
	var scratch [8]Count
	for more := !d.empty(); more; {
		key, err := d.key()
		if err != nil {
			return err
		}
		var bit uint8
		switch string(key) {
		case "lower":
			bit = fLower
			if p.seen&bit == 0 {
				p.lower, _, err = d.bound("lower")
			}
		case "upper":
			bit = fUpper
			if p.seen&bit == 0 {
				p.upper, p.unbounded, err = d.bound("upper")
			}
		case "counts":
			bit = fCounts
			if p.seen&bit == 0 {
				p.counts, err = d.counts(scratch[:0])
			}
		case "time":
			bit = fTime
			if p.seen&bit == 0 {
				p.time, err = d.uint(inProgress, "time")
			}
		case "count":
			bit = fCount
			if p.seen&bit == 0 {
				p.count, err = d.uint(inProgress, "count")
			}
		default:
			return unknownField(inProgress, key, `"lower", "upper" and "counts"`)
		}
		if p.seen&bit != 0 {
			return duplicate(inProgress, string(key))
		}
		if err != nil {
			return err
		}
		p.seen |= bit
		if more, err = d.next('}'); err != nil {
			return err
		}
	}
	return p.build(m)
}

// bound reads "lower" or "upper": a number, or an array of at most one
// number. For "upper", null and [] mean unbounded.
func (d *jsonDecoder) bound(field string) (t uint64, unbounded bool, err error) {
	if d.i >= len(d.b) {
		return 0, false, d.wrongType(inProgress, field, "a number")
	}
	switch d.b[d.i] {
	case 'n':
		if field == "upper" {
			if end, ok := literalEnd(d.b, d.i, "null"); ok {
				d.i = end
				return 0, true, nil
			}
		}
	case '[':
		return d.boundArray(field)
	}
	t, err = d.uint(inProgress, field)
	return t, false, err
}

func (d *jsonDecoder) boundArray(field string) (t uint64, unbounded bool, err error) {
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		if field == "lower" {
			return 0, false, errorf(inProgress + `"lower" is an empty array (only "upper" may be [], meaning unbounded)`)
		}
		return 0, true, nil
	}
	if t, err = d.uint(inProgress, field); err != nil {
		return 0, false, err
	}
	more, err := d.next(']')
	if err != nil {
		return 0, false, err
	}
	if more {
		return 0, false, errorf(inProgress+"%q has more than one element", field)
	}
	return t, false, nil
}

// counts reads the "counts" array (or null, meaning none), appending its
// entries to cs.
func (d *jsonDecoder) counts(cs []Count) ([]Count, error) {
	if end, ok := literalEnd(d.b, d.i, "null"); ok {
		d.i = end
		return cs, nil
	}
	if d.i >= len(d.b) || d.b[d.i] != '[' {
		return cs, d.wrongType(inProgress, "counts", "an array")
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return cs, nil
	}
	for k := 0; ; k++ {
		c, err := d.countEntry(k)
		if err != nil {
			return cs, err
		}
		cs = append(cs, c)
		more, err := d.next(']')
		if err != nil || !more {
			return cs, err
		}
	}
}

// countEntry reads {"time": t, "count": c}, entry k of "counts".
func (d *jsonDecoder) countEntry(k int) (Count, error) {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return Count{}, d.wrongType(countElem(k), "", "an object")
	}
	d.i++
	d.ws()
	var f countFields
	for more := !d.empty(); more; {
		key, err := d.key()
		if err != nil {
			return Count{}, err
		}
		var bit uint8
		switch string(key) {
		case "time":
			bit = fTime
			if f.seen&bit == 0 {
				f.c.Time, err = d.countUint(k, "time")
			}
		case "count":
			bit = fCount
			if f.seen&bit == 0 {
				f.c.Count, err = d.countUint(k, "count")
			}
		default:
			return Count{}, unknownField(countWhat(k), key, `"time" and "count"`)
		}
		if f.seen&bit != 0 {
			return Count{}, duplicate(countWhat(k), string(key))
		}
		if err != nil {
			return Count{}, err
		}
		f.seen |= bit
		if more, err = d.next('}'); err != nil {
			return Count{}, err
		}
	}
	return f.c, f.check(k)
}

// countUint reads field of count entry k, building the entry's name only
// for an error.
func (d *jsonDecoder) countUint(k int, field string) (uint64, error) {
	if v, end, ok := fastUint(d.b, d.i); ok && plainEnd(d.b, end) {
		d.i = end
		return v, nil
	}
	if d.i < len(d.b) && (d.b[d.i] == '-' || isDigit(d.b[d.i])) {
		if end, msg := numberEnd(d.b, d.i); msg == "" {
			if v, ok := jsonNum(d.b[d.i:end]).uintOK(); ok {
				d.i = end
				return v, nil
			}
		}
	}
	return d.uint(countWhat(k), field)
}
