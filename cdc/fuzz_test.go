package cdc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// Seeds shared by the fuzz targets, besides the corpora in testdata/fuzz.
var jsonSeeds = []string{
	`{"update":{"data":"k3","time":123,"diff":-1}}`,
	`{"update":{"data":{"b":[1,2.5e3,null],"a":"\u00e9\n"},"time":0,"diff":1}}`,
	`{"update": {"data": "k", "time": 7.0, "diff": 1}}`,
	`{"progress":{"lower":5,"upper":6,"counts":[{"time":5,"count":2}]}}`,
	`{"progress":{"lower":[5],"upper":[],"counts":[{"time":9,"count":0},{"time":6,"count":1}]}}`,
	`{"progress":{"time":7,"count":2}}`,
	`{"progress":{"time":7,"count":0}}`,
	`{"progress":{"time":07,"count":1}}`,
	`{"progress":{"time":18446744073709551615,"count":2}}`,
	`{"progress":{"time":18446744073709551616,"count":2}}`,
	`{"progress":{"time":1234567890123456789,"count":12345678901234567890}}`,
	`{"finish":{"time":7}}`,
	`{"update":{"data":"k3","time":18446744073709551615,"diff":-9223372036854775808}}`,
	`{"update":{"data":{"a":1,"a":2},"time":1,"diff":1}}`,
	`{"progress":{"lower":5,"upper":5}}`,
	`[1]`,
}

// FuzzParseJSON checks that ParseJSON never panics, that its fast path
// agrees with the general decoder, and that whatever it accepts survives
// every codec unchanged.
func FuzzParseJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var m, general Message
		err := ParseJSON(line, &m)
		gerr := parseJSONGeneral(line, &general)
		if parseJSONFast(line, &Message{}, nil) && gerr != nil {
			t.Fatalf("fast path accepts %q, general decoder says %v", line, gerr)
		}
		if (err == nil) != (gerr == nil) || (err == nil && !sameMessage(m, general)) {
			t.Fatalf("ParseJSON(%q) = %v, %v; general decoder %v, %v", line, m, err, general, gerr)
		}
		if err != nil {
			if err.Error() != gerr.Error() {
				t.Fatalf("errors differ: %v vs %v", err, gerr)
			}
			return
		}
		checkDecoded(t, &m)
		out := AppendJSON(nil, &m)
		var again Message
		if err := ParseJSON(out, &again); err != nil || !sameMessage(m, again) {
			t.Fatalf("re-parse of %s: %v, %v (was %v)", out, again, err, m)
		}
		if !parseJSONFast(out, &again, nil) {
			t.Fatalf("fast path refuses cdclog's own %s", out)
		}
		checkBinaryRoundTrip(t, &m)
		checkMsgpackExact(t, &m)
	})
}

// checkDecoded checks the promises every decoder makes about a message.
func checkDecoded(t *testing.T, m *Message) {
	t.Helper()
	if err := m.Validate(); err != nil {
		t.Fatalf("decoded %v does not validate: %v", m, err)
	}
	if m.Kind == KindUpdate && !IsCanonical(m.Update.Data) {
		t.Fatalf("decoded data %q is not canonical", m.Update.Data)
	}
	if m.Kind == KindProgress && m.Progress.Counts != nil && len(m.Progress.Counts) == 0 {
		t.Fatalf("empty non-nil counts")
	}
}

func checkBinaryRoundTrip(t *testing.T, m *Message) {
	t.Helper()
	b := AppendBinary([]byte{0xc1}, m)[1:]
	var again Message
	n, err := ParseBinary(b, &again)
	if err != nil || n != len(b) || !sameMessage(*m, again) {
		t.Fatalf("binary round trip of %v: %v, n=%d/%d, %v", m, again, n, len(b), err)
	}
}

// checkMsgpackExact checks that msgpack carries m exactly, or that
// AppendMsgpack refuses it, and CheckMsgpack with it, because its data
// holds a number a float64 cannot give back as written.
func checkMsgpackExact(t *testing.T, m *Message) {
	t.Helper()
	b, err := AppendMsgpack([]byte{0xc1}, m)
	if cerr := CheckMsgpack(m); (err == nil) != (cerr == nil) {
		t.Fatalf("AppendMsgpack(%v): %v, but CheckMsgpack: %v", m, err, cerr)
	}
	if err != nil {
		if !errors.Is(err, ErrMsgpackInexact) || m.Kind != KindUpdate || !bytes.Equal(b, []byte{0xc1}) {
			t.Fatalf("AppendMsgpack(%v): %v, wrote % x", m, err, b)
		}
		return
	}
	var again Message
	if n, err := ParseMsgpack(b[1:], &again); err != nil || n != len(b)-1 || !sameMessage(*m, again) {
		t.Fatalf("msgpack changed %v to %v (%d of %d bytes, %v)", m, again, n, len(b)-1, err)
	}
}

// FuzzParseMsgpack checks that ParseMsgpack never panics, reports exactly
// the extent the framing scan finds, and that what it accepts survives
// every codec.
func FuzzParseMsgpack(f *testing.F) {
	for _, s := range jsonSeeds {
		var m Message
		if ParseJSON([]byte(s), &m) == nil && CheckMsgpack(&m) == nil {
			f.Add(msgpackOf(&m))
		}
	}
	f.Add([]byte{0x81, 0xa6, 'f', 'i', 'n', 'i', 's', 'h', 0x81, 0xa4, 't', 'i', 'm', 'e', 0xcb, 0x40, 0x1c, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		n, err := ParseMsgpack(b, &m)
		var fast, general Message
		if fn, ok := fastMsgpack(b, &fast, nil, nil); ok {
			gn, gerr := parseMsgpackGeneral(b, &general, nil)
			if gerr != nil || gn != fn || !reflect.DeepEqual(fast, general) {
				t.Fatalf("fast path: %d bytes %v; general: %d bytes %v, %v", fn, fast, gn, general, gerr)
			}
		}
		end, _, serr := mpSkip(b, 0, 1)
		if err != nil {
			if n != 0 || !reflect.DeepEqual(m, Message{}) {
				t.Fatalf("on error n=%d m=%v", n, m)
			}
			if isTruncated(err) && serr == nil {
				t.Fatalf("truncation reported for a complete value of %d bytes: %v", end, err)
			}
			return
		}
		if serr != nil || end != n {
			t.Fatalf("decoded %d bytes; framing scan says %d, %v", n, end, serr)
		}
		checkDecoded(t, &m)
		var again Message
		if err := ParseJSON(AppendJSON(nil, &m), &again); err != nil || !sameMessage(m, again) {
			t.Fatalf("JSON round trip of %v: %v, %v", m, again, err)
		}
		if _, err := ParseMsgpack(msgpackOf(&m), &again); err != nil || !sameMessage(m, again) {
			t.Fatalf("msgpack round trip of %v: %v, %v", m, again, err)
		}
		checkBinaryRoundTrip(t, &m)
	})
}

// FuzzParseBinary checks that ParseBinary never panics and that what it
// accepts is valid and re-encodes to a message that decodes the same.
func FuzzParseBinary(f *testing.F) {
	for _, s := range jsonSeeds {
		var m Message
		if ParseJSON([]byte(s), &m) == nil {
			f.Add(AppendBinary(nil, &m))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		n, err := ParseBinary(b, &m)
		if err != nil {
			if n != 0 || !reflect.DeepEqual(m, Message{}) {
				t.Fatalf("on error n=%d m=%v", n, m)
			}
			return
		}
		if n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
		checkDecoded(t, &m)
		checkBinaryRoundTrip(t, &m)
		var again Message
		if err := ParseJSON(AppendJSON(nil, &m), &again); err != nil || !sameMessage(m, again) {
			t.Fatalf("JSON round trip of %v: %v, %v", m, again, err)
		}
	})
}

// FuzzCanonical checks AppendCanonical against encoding/json: it accepts
// only valid JSON, rejects valid JSON only for the documented reasons,
// preserves the value, and is idempotent.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,false,null,-0.5e-3]}`, `"\ud83d\ude00\u00e9\/"`, `{"a":1,"a":2}`,
		` [ ] `, `"\ud800"`, "\"\xff\"", `1e400`, `{"\u0061":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := AppendCanonical(nil, in)
		valid := json.Valid(in)
		if err != nil {
			if valid && !refusedOnPurpose(err) {
				t.Fatalf("rejects valid JSON %q: %v", in, err)
			}
			if IsCanonical(in) {
				t.Fatalf("IsCanonical(%q) but AppendCanonical fails: %v", in, err)
			}
			return
		}
		if !valid {
			t.Fatalf("accepts invalid JSON %q as %q", in, out)
		}
		if !IsCanonical(out) {
			t.Fatalf("output %q of %q is not canonical", out, in)
		}
		if again, err := AppendCanonical(nil, out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q then %q, %v", out, again, err)
		}
		if IsCanonical(in) && !bytes.Equal(in, out) {
			t.Fatalf("canonical input %q rewritten to %q", in, out)
		}
		if !sameJSONValue(t, in, out) {
			t.Fatalf("value changed: %q to %q", in, out)
		}
	})
}

// refusedOnPurpose reports whether err rejects valid JSON for a documented
// reason.
func refusedOnPurpose(err error) bool {
	for _, why := range []string{"duplicate key", "invalid UTF-8", "lone surrogate", "nesting deeper"} {
		if strings.Contains(err.Error(), why) {
			return true
		}
	}
	return false
}

func sameJSONValue(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(b []byte) any {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("encoding/json rejects %q: %v", b, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// FuzzReader checks both framings: no panic, consistent positions, the
// same events however the input is split, and every message equal to what
// the codec makes of its raw bytes.
func FuzzReader(f *testing.F) {
	var jsonl []byte
	var mpk []byte
	for _, s := range jsonSeeds {
		jsonl = append(append(jsonl, s...), '\n')
		var m Message
		if ParseJSON([]byte(s), &m) == nil && CheckMsgpack(&m) == nil {
			mpk = appendMsgpackOf(mpk, &m)
		}
	}
	f.Add(jsonl, false, uint8(0))
	f.Add([]byte("\xef\xbb\xbf"+jsonSeeds[0]+"\r\n\n  \n"+jsonSeeds[1]), false, uint8(40))
	f.Add(mpk, true, uint8(0))
	f.Add(mpk[:len(mpk)-3], true, uint8(30))
	f.Fuzz(func(t *testing.T, in []byte, msgpack bool, limit uint8) {
		format := JSONL
		if msgpack {
			format = Msgpack
		}
		whole, _ := fuzzRead(t, in, format, int(limit), false, func(r io.Reader) io.Reader { return r })
		bytewise, _ := fuzzRead(t, in, format, int(limit), false, iotest.OneByteReader)
		if !reflect.DeepEqual(whole, bytewise) {
			t.Fatalf("events depend on how the input is split:\n%v\n%v", whole, bytewise)
		}
		// Pauses (a pipe whose producer stops, at any byte) change nothing.
		paused, _ := fuzzRead(t, in, format, int(limit), false, func(r io.Reader) io.Reader {
			return &pausingReader{r: iotest.OneByteReader(r)}
		})
		if !reflect.DeepEqual(whole, paused) {
			t.Fatalf("events depend on pauses in the input:\n%v\n%v", whole, paused)
		}
		// HoldUnfinished only ever leaves out a last message that was an
		// error, and stops where it began.
		held, unfinished := fuzzRead(t, in, format, int(limit), true, iotest.HalfReader)
		switch {
		case !unfinished && !reflect.DeepEqual(whole, held):
			t.Fatalf("HoldUnfinished changed a finished input's events:\n%v\n%v", whole, held)
		case unfinished:
			n := len(held)
			if n >= len(whole) || !slices.Equal(whole[:n], held) || whole[n].err == "" {
				t.Fatalf("HoldUnfinished left out more than an unfinished last message:\n%v\n%v", whole, held)
			}
		}
	})
}

type fuzzEvent struct {
	msg    string
	err    string
	pos    Pos
	raw    string
	offset int64
	line   int64
}

// fuzzRead reads in through wrap, retrying where the input pauses, and
// returns the events and whether the input ended unfinished (hold:
// HoldUnfinished set).
func fuzzRead(t *testing.T, in []byte, f Format, limit int, hold bool, wrap func(io.Reader) io.Reader) ([]fuzzEvent, bool) {
	r := NewReader(wrap(bytes.NewReader(in)), f, "fuzz")
	if limit > 0 {
		r.max = limit
	}
	if hold {
		r.HoldUnfinished()
	}
	var evs []fuzzEvent
	last := int64(0)
	for i := 0; i <= len(in)+1; i++ {
		var m Message
		err := r.Next(&m)
		for pauses := 0; err == ErrPaused; pauses++ {
			if pauses > 2*len(in)+2 {
				t.Fatalf("paused forever at offset %d", r.Offset())
			}
			err = r.Next(&m)
		}
		if err == io.EOF {
			if r.Offset() != int64(len(in)) {
				t.Fatalf("EOF at offset %d of %d", r.Offset(), len(in))
			}
			return evs, false
		}
		if err == ErrUnfinished {
			// Past the last message (and any blank lines after it), before
			// a last JSON line without its line end.
			if !hold || r.Offset() < last || r.Offset() > int64(len(in)) ||
				f == JSONL && bytes.IndexByte(in[r.Offset():], '\n') >= 0 {
				t.Fatalf("unfinished at offset %d (hold %v), last message ended at %d", r.Offset(), hold, last)
			}
			return evs, true
		}
		var de *DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("unexpected error %v", err)
		}
		p, raw := r.Pos(), r.Raw()
		fatal := de != nil && de.Fatal
		if fatal && r.Offset() != p.Offset {
			t.Fatalf("fatal error at %v, but offset %d", p, r.Offset())
		}
		if p.Offset < last || (!fatal && r.Offset() < p.Offset+int64(len(raw))) || r.Offset() > int64(len(in)) {
			t.Fatalf("positions out of order: last %d, pos %v, raw %d bytes, offset %d", last, p, len(raw), r.Offset())
		}
		if !bytes.Equal(in[p.Offset:p.Offset+int64(len(raw))], raw) {
			t.Fatalf("raw %q is not the input at %d", raw, p.Offset)
		}
		last = r.Offset()
		ev := fuzzEvent{pos: p, raw: string(raw), offset: r.Offset(), line: r.Line()}
		if err != nil {
			ev.err = err.Error()
		} else {
			ev.msg = m.String()
			checkDecoded(t, &m)
			var again Message
			switch f {
			case JSONL:
				err = ParseJSON(raw, &again)
			case Msgpack:
				_, err = ParseMsgpack(raw, &again)
			}
			if err != nil || !sameMessage(m, again) {
				t.Fatalf("message %v differs from its raw bytes' %v, %v", m, again, err)
			}
		}
		evs = append(evs, ev)
		if de != nil && de.Fatal {
			return evs, false
		}
	}
	t.Fatalf("more events than bytes")
	return nil, false
}

// msgpackOf returns m in msgpack, for messages that msgpack carries.
func msgpackOf(m *Message) []byte { return appendMsgpackOf(nil, m) }

func appendMsgpackOf(dst []byte, m *Message) []byte { return appendMessageOf(dst, Msgpack, m) }

// appendMessageOf is AppendMessage for messages known to be representable:
// a test's own message that is not is a bug in the test.
func appendMessageOf(dst []byte, f Format, m *Message) []byte {
	b, err := AppendMessage(dst, f, m)
	if err != nil {
		panic(err)
	}
	return b
}
