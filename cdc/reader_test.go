package cdc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// event is what one call to Next gave.
type event struct {
	msg    string // Message.String, or "" on error
	err    string // the error, or ""
	fatal  bool
	pos    Pos
	raw    string
	offset int64 // Offset after the call
	line   int64 // Line after the call
}

// readAll calls Next until io.EOF or a fatal error.
func readAll(t *testing.T, r *Reader) []event {
	t.Helper()
	var evs []event
	for i, pauses := 0, 0; i < 1000; i++ {
		var m Message
		err := r.Next(&m)
		if err == io.EOF {
			return evs
		}
		if err == ErrPaused && pauses < 1e6 {
			i, pauses = i-1, pauses+1
			continue
		}
		ev := event{pos: r.Pos(), raw: string(r.Raw()), offset: r.Offset(), line: r.Line()}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Next: non-decode error %v", err)
			}
			if de.Pos != r.Pos() {
				t.Errorf("error position %v differs from Pos() %v", de.Pos, r.Pos())
			}
			ev.err, ev.fatal = err.Error(), de.Fatal
		} else {
			ev.msg = m.String()
		}
		evs = append(evs, ev)
		if ev.fatal {
			if again := r.Next(&m); again != err {
				t.Errorf("after a fatal error Next returned %v", again)
			}
			return evs
		}
	}
	t.Fatal("no end")
	return nil
}

// readers wraps the input in readers that split it differently.
var readers = map[string]func(io.Reader) io.Reader{
	"whole":    func(r io.Reader) io.Reader { return r },
	"one byte": iotest.OneByteReader,
	"half":     iotest.HalfReader,
	"data+EOF": iotest.DataErrReader,
	"pausing":  func(r io.Reader) io.Reader { return &pausingReader{r: iotest.OneByteReader(r)} },
}

// nextMsg is Next, called again while the input pauses.
func nextMsg(r *Reader, m *Message) error {
	for {
		if err := r.Next(m); err != ErrPaused {
			return err
		}
	}
}

// pausingReader has no input at once (ErrPaused) before every read.
type pausingReader struct {
	r      io.Reader
	paused bool
}

func (p *pausingReader) Read(b []byte) (int, error) {
	if p.paused = !p.paused; p.paused {
		return 0, ErrPaused
	}
	return p.r.Read(b)
}

func checkEvents(t *testing.T, in string, f Format, want []event) {
	t.Helper()
	for name, wrap := range readers {
		r := NewReader(wrap(strings.NewReader(in)), f, "in.jsonl")
		got := readAll(t, r)
		if len(got) != len(want) {
			t.Errorf("%s: %d events, want %d:\n%v", name, len(got), len(want), got)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: event %d\n got  %+v\n want %+v", name, i, got[i], want[i])
			}
		}
	}
}

func pos(line, offset int64) Pos { return Pos{Source: "in.jsonl", Line: line, Offset: offset} }

const (
	lineA = `{"update":{"data":"a","time":1,"diff":1}}`
	lineB = `{"finish":{"time":2}}`
)

func TestReaderJSONLPositions(t *testing.T) {
	a, b := int64(len(lineA)), int64(len(lineB))
	tests := []struct {
		name string
		in   string
		want []event
	}{
		{"two lines", lineA + "\n" + lineB + "\n", []event{
			{msg: `update("a", t=1, +1)`, pos: pos(1, 0), raw: lineA, offset: a + 1, line: 1},
			{msg: `finish(t=2)`, pos: pos(2, a+1), raw: lineB, offset: a + b + 2, line: 2},
		}},
		{"no final newline", lineA + "\n" + lineB, []event{
			{msg: `update("a", t=1, +1)`, pos: pos(1, 0), raw: lineA, offset: a + 1, line: 1},
			{msg: `finish(t=2)`, pos: pos(2, a+1), raw: lineB, offset: a + b + 1, line: 2},
		}},
		{"CRLF", lineA + "\r\n" + lineB + "\r\n", []event{
			{msg: `update("a", t=1, +1)`, pos: pos(1, 0), raw: lineA, offset: a + 2, line: 1},
			{msg: `finish(t=2)`, pos: pos(2, a+2), raw: lineB, offset: a + b + 4, line: 2},
		}},
		{"BOM", "\xef\xbb\xbf" + lineB + "\n", []event{
			{msg: `finish(t=2)`, pos: pos(1, 3), raw: lineB, offset: b + 4, line: 1},
		}},
		{"blank lines skipped", "\n  \n\t\r\n" + lineB + "\n\n \n", []event{
			{msg: `finish(t=2)`, pos: pos(4, 7), raw: lineB, offset: b + 8, line: 4},
		}},
		{"only blank lines", "\n \n\r\n", nil},
		{"empty input", "", nil},
		{"bad line then good", "{\"finish\":{}}\n" + lineB + "\n", []event{
			{err: `in.jsonl:1: finish: missing "time"`, pos: pos(1, 0), raw: `{"finish":{}}`, offset: 14, line: 1},
			{msg: `finish(t=2)`, pos: pos(2, 14), raw: lineB, offset: 14 + b + 1, line: 2},
		}},
		{"malformed line names its column", "x\n" + lineB, []event{
			{err: `in.jsonl:1: malformed JSON at column 1: invalid character 'x', expected '{'`, pos: pos(1, 0), raw: "x", offset: 2, line: 1},
			{msg: `finish(t=2)`, pos: pos(2, 2), raw: lineB, offset: 2 + b, line: 2},
		}},
		{"NUL byte", "{\"finish\":{\"time\":\x00}}\n" + lineB, []event{
			{err: `in.jsonl:1: malformed JSON at column 19: invalid character NUL byte, expected a value`, pos: pos(1, 0), raw: "{\"finish\":{\"time\":\x00}}", offset: 22, line: 1},
			{msg: `finish(t=2)`, pos: pos(2, 22), raw: lineB, offset: 22 + b, line: 2},
		}},
		{"binary garbage", "\x00\x01\x02\n", []event{
			{err: `in.jsonl:1: malformed JSON at column 1: invalid character NUL byte, expected '{'`, pos: pos(1, 0), raw: "\x00\x01\x02", offset: 4, line: 1},
		}},
		{"BOM only at the start", lineB + "\n\xef\xbb\xbf" + lineB, []event{
			{msg: `finish(t=2)`, pos: pos(1, 0), raw: lineB, offset: b + 1, line: 1},
			{err: `in.jsonl:2: malformed JSON at column 1: invalid character '\ufeff', expected '{'`, pos: pos(2, b+1), raw: "\xef\xbb\xbf" + lineB, offset: 2*b + 4, line: 2},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkEvents(t, tc.in, JSONL, tc.want)
		})
	}
}

func TestReaderSkipsOverlongLinesWithoutHoldingThem(t *testing.T) {
	long := `{"update":{"data":"` + strings.Repeat("x", 100) + `","time":1,"diff":1}}`
	in := lineB + "\n" + long + "\n" + lineB + "\n" + long
	for name, wrap := range readers {
		r := NewReader(wrap(strings.NewReader(in)), JSONL, "s")
		r.max = 64
		got := readAll(t, r)
		if len(got) != 4 {
			t.Fatalf("%s: events %+v", name, got)
		}
		b, l := int64(len(lineB)), int64(len(long))
		want := []event{
			{msg: "finish(t=2)", pos: Pos{"s", 1, 0}, raw: lineB, offset: b + 1, line: 1},
			{err: "s:2: line 2 exceeds the 64-byte message limit", pos: Pos{"s", 2, b + 1}, offset: b + l + 2, line: 2},
			{msg: "finish(t=2)", pos: Pos{"s", 3, b + l + 2}, raw: lineB, offset: 2*b + l + 3, line: 3},
			{err: "s:4: line 4 exceeds the 64-byte message limit", pos: Pos{"s", 4, 2*b + l + 3}, offset: 2*b + 2*l + 3, line: 4},
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: event %d\n got  %+v\n want %+v", name, i, got[i], want[i])
			}
		}
		if cap(r.buf) > chunkSize {
			t.Errorf("%s: buffer grew to %d", name, cap(r.buf))
		}
	}
}

func TestReaderLineLimitBoundary(t *testing.T) {
	// A line of exactly the limit is accepted, with or without '\r'.
	line := `{"finish":{"time":7}}` // 21 bytes
	for _, tc := range []struct {
		in  string
		max int
		ok  bool
	}{
		{line + "\n", 21, true}, {line + "\r\n", 21, true}, {line, 21, true},
		{line + "\n", 20, false}, {line + "\r\n", 20, false}, {line, 20, false},
		{" " + line + "\r", 21, false},
	} {
		r := NewReader(strings.NewReader(tc.in), JSONL, "s")
		r.max = tc.max
		var m Message
		err := r.Next(&m)
		if (err == nil) != tc.ok {
			t.Errorf("%q with limit %d: err = %v", tc.in, tc.max, err)
		}
	}
}

func TestReaderRejectsLinesBeyondSixteenMiB(t *testing.T) {
	long := append(append([]byte(`{"update":{"data":"`), bytes.Repeat([]byte("x"), MaxMessageSize)...), `","time":1,"diff":1}}`...)
	in := io.MultiReader(bytes.NewReader(long), strings.NewReader("\n"+lineB+"\n"))
	r := NewReader(in, JSONL, "big")
	var m Message
	err := r.Next(&m)
	var de *DecodeError
	if !errors.As(err, &de) || de.Fatal || de.Reason != "line 1 exceeds the 16 MiB message limit" {
		t.Fatalf("err = %v", err)
	}
	if err := r.Next(&m); err != nil || m.Kind != KindFinish || r.Pos().Line != 2 {
		t.Fatalf("after the long line: %v, %v at %v", err, m, r.Pos())
	}
	if cap(r.buf) > MaxMessageSize+2 {
		t.Errorf("buffer grew to %d", cap(r.buf))
	}
}

func TestReaderMessagesStayValidAcrossChunks(t *testing.T) {
	// Several chunks' worth of messages, kept while the Reader reuses its
	// buffer: their data and counts must not change. Every fourth update's
	// data is not canonical (the general decoder's path).
	n := 3 * chunkSize / 40
	want := make([]Message, 0, n)
	for i := 0; i < n; i++ {
		switch {
		case i%3 == 2:
			want = append(want, NewProgress(uint64(i), uint64(i)+1, Count{Time: uint64(i), Count: uint64(i%7 + 1)}))
		default:
			want = append(want, NewUpdate([]byte(fmt.Sprintf(`"k%d"`, i)), uint64(i), 1))
		}
	}
	for _, f := range []Format{JSONL, Msgpack} {
		var in []byte
		for i := range want {
			if f == JSONL && i%4 == 0 && want[i].Kind == KindUpdate {
				in = fmt.Appendf(in, `{"update":{"diff":1, "time":%d, "data":"k%d"}}`+"\n", i, i)
				continue
			}
			in = appendMessageOf(in, f, &want[i])
		}
		for name, wrap := range readers {
			r := NewReader(wrap(bytes.NewReader(in)), f, "s")
			var msgs []Message
			for {
				var m Message
				err := nextMsg(r, &m)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, m)
			}
			if len(msgs) != n {
				t.Fatalf("%v %s: %d messages, want %d", f, name, len(msgs), n)
			}
			for i := range msgs {
				if got, w := AppendJSON(nil, &msgs[i]), AppendJSON(nil, &want[i]); !bytes.Equal(got, w) {
					t.Fatalf("%v %s: message %d became %s, want %s", f, name, i, got, w)
				}
			}
		}
	}
}

func TestReaderResumeContinuesCounting(t *testing.T) {
	in := lineA + "\n" + lineB + "\n" + lineB + "\n"
	r := NewReader(strings.NewReader(in), JSONL, "s")
	var m Message
	if err := r.Next(&m); err != nil {
		t.Fatal(err)
	}
	off, line := r.Offset(), r.Line()
	r2 := NewReader(strings.NewReader(in[off:]), JSONL, "s")
	r2.Resume(off, line)
	got := readAll(t, r2)
	b := int64(len(lineB))
	want := []event{
		{msg: "finish(t=2)", pos: Pos{"s", 2, off}, raw: lineB, offset: off + b + 1, line: 2},
		{msg: "finish(t=2)", pos: Pos{"s", 3, off + b + 1}, raw: lineB, offset: off + 2*b + 2, line: 3},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestReaderPassesReadErrorsThrough(t *testing.T) {
	boom := errors.New("disk on fire")
	in := io.MultiReader(strings.NewReader(lineB+"\n"+lineB), iotest.ErrReader(boom))
	for _, f := range []Format{JSONL, Msgpack} {
		src := in
		if f == Msgpack {
			m := NewFinish(2)
			src = io.MultiReader(bytes.NewReader(msgpackOf(&m)), bytes.NewReader([]byte{0x81}), iotest.ErrReader(boom))
		}
		r := NewReader(src, f, "s")
		var m Message
		if err := r.Next(&m); err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		// The partial last message is not taken for a whole one.
		if err := r.Next(&m); err != boom {
			t.Errorf("%v: err = %v, want %v", f, err, boom)
		}
	}
}

func msgpackStream(t *testing.T, parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case Message:
			b = appendMsgpackOf(b, &p)
		case []byte:
			b = append(b, p...)
		default:
			b = append(b, mp(t, p)...)
		}
	}
	return b
}

func TestReaderMsgpackPositionsAndRecovery(t *testing.T) {
	good := NewFinish(2)
	gb := msgpackOf(&good)
	g := int64(len(gb))
	wrongShape := mp(t, obj{{"finish", obj{{"time", -1}}}})
	w := int64(len(wrongShape))
	mpos := func(off int64) Pos { return Pos{Source: "in.jsonl", Offset: off} }
	tests := []struct {
		name string
		in   []byte
		want []event
	}{
		{"sequence", msgpackStream(t, good, good), []event{
			{msg: "finish(t=2)", pos: mpos(0), raw: string(gb), offset: g},
			{msg: "finish(t=2)", pos: mpos(g), raw: string(gb), offset: 2 * g},
		}},
		{"wrong shape is skipped", msgpackStream(t, good, wrongShape, good), []event{
			{msg: "finish(t=2)", pos: mpos(0), raw: string(gb), offset: g},
			{err: `in.jsonl: byte 15: finish: "time" is negative (-1)`, pos: mpos(g), raw: string(wrongShape), offset: g + w},
			{msg: "finish(t=2)", pos: mpos(g + w), raw: string(gb), offset: 2*g + w},
		}},
		{"not msgpack is fatal", msgpackStream(t, good, []byte{0xc1}, good), []event{
			{msg: "finish(t=2)", pos: mpos(0), raw: string(gb), offset: g},
			{err: `in.jsonl: byte 15: malformed msgpack at byte 0 of the message: invalid type byte 0xc1`, fatal: true, pos: mpos(g), offset: g},
		}},
		{"truncated at the end is fatal", msgpackStream(t, good, gb[:5]), []event{
			{msg: "finish(t=2)", pos: mpos(0), raw: string(gb), offset: g},
			{err: `in.jsonl: byte 15: truncated msgpack message at byte 15`, fatal: true, pos: mpos(g), raw: string(gb[:5]), offset: g},
		}},
		{"a top-level scalar is skipped", msgpackStream(t, []byte{0x07}, good), []event{
			{err: `in.jsonl: byte 0: message is not a map but an integer`, pos: mpos(0), raw: "\x07", offset: 1},
			{msg: "finish(t=2)", pos: mpos(1), raw: string(gb), offset: 1 + g},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkEvents(t, string(tc.in), Msgpack, tc.want)
		})
	}
}

func TestReaderMsgpackTooLargeIsFatal(t *testing.T) {
	big := mp(t, obj{{"update", obj{{"data", strings.Repeat("x", 200)}, {"time", 1}, {"diff", 1}}}})
	for name, wrap := range readers {
		r := NewReader(wrap(bytes.NewReader(big)), Msgpack, "s")
		r.max = 100
		var m Message
		err := nextMsg(r, &m)
		var de *DecodeError
		if !errors.As(err, &de) || !de.Fatal || de.Reason != "msgpack message at byte 0 exceeds the 100-byte message limit" {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestReaderMsgpackResume(t *testing.T) {
	a, b := NewFinish(1), NewFinish(2)
	in := msgpackStream(t, a, b)
	n := len(msgpackOf(&a))
	r := NewReader(bytes.NewReader(in[n:]), Msgpack, "s")
	r.Resume(int64(n), 0)
	var m Message
	if err := r.Next(&m); err != nil || m.Finish.Time != 2 || r.Pos().Offset != int64(n) || r.Offset() != int64(len(in)) {
		t.Errorf("resumed: %v %v pos %v offset %d", err, m, r.Pos(), r.Offset())
	}
}

func TestReaderMsgpackLargeMessageArrivingSlowly(t *testing.T) {
	// Many small values in one message, delivered a byte at a time: the
	// extent scan resumes rather than restarting on every read.
	items := make([]any, 20000)
	for i := range items {
		items[i] = i % 100
	}
	in := mp(t, obj{{"update", obj{{"data", items}, {"time", 1}, {"diff", 1}}}})
	in = append(in, msgpackOf(&Message{Kind: KindFinish})...)
	r := NewReader(iotest.OneByteReader(bytes.NewReader(in)), Msgpack, "s")
	var m Message
	if err := r.Next(&m); err != nil || m.Kind != KindUpdate {
		t.Fatalf("%v %v", err, m)
	}
	if err := r.Next(&m); err != nil || m.Kind != KindFinish {
		t.Fatalf("%v %v", err, m)
	}
}

func TestWriterRoundTripsThroughReader(t *testing.T) {
	msgs := []Message{update(`{"a":1}`, 1, 1), NewProgress(0, 2, Count{1, 1}), unbounded(2), NewFinish(3)}
	for _, f := range []Format{JSONL, Msgpack} {
		var out bytes.Buffer
		w := NewWriter(&out, f)
		for i := 0; i < 5000; i++ {
			if err := w.Write(&msgs[i%len(msgs)]); err != nil {
				t.Fatal(err)
			}
		}
		if out.Len() == 0 {
			t.Errorf("%v: nothing written before Flush though the buffer filled", f)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if w.Buffered() != 0 {
			t.Errorf("%v: %d bytes still buffered", f, w.Buffered())
		}
		r := NewReader(&out, f, "s")
		for i := 0; ; i++ {
			var m Message
			err := r.Next(&m)
			if err == io.EOF {
				if i != 5000 {
					t.Errorf("%v: read %d messages", f, i)
				}
				break
			}
			if err != nil || !sameMessage(m, msgs[i%len(msgs)]) {
				t.Fatalf("%v: message %d: %v %v", f, i, m, err)
			}
		}
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestWriterErrorIsSticky(t *testing.T) {
	fw := &failingWriter{}
	w := NewWriter(fw, JSONL)
	m := NewFinish(1)
	if err := w.Write(&m); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err == nil {
		t.Fatal("Flush succeeded")
	}
	if err := w.Write(&m); err == nil || fw.n != 1 {
		t.Errorf("Write after failure: %v (%d writes)", err, fw.n)
	}
}

func TestAppendMessageAddsNewlineForJSONL(t *testing.T) {
	m := NewFinish(1)
	if got, err := AppendMessage(nil, JSONL, &m); string(got) != `{"finish":{"time":1}}`+"\n" || err != nil {
		t.Errorf("JSONL: %q, %v", got, err)
	}
	if got, err := AppendMessage(nil, Msgpack, &m); !bytes.Equal(got, msgpackOf(&m)) || err != nil {
		t.Errorf("msgpack: % x, %v", got, err)
	}
}

func TestReaderHoldUnfinishedLeavesAnUnfinishedLastMessage(t *testing.T) {
	whole := msgpackOf(&Message{Kind: KindFinish, Finish: Finish{Time: 2}})
	tests := []struct {
		name   string
		f      Format
		in     string
		msgs   int    // messages read before the end
		offset int64  // where the input stops
		err    error  // what ends it
		reason string // or, when set, the *DecodeError that does
	}{
		{"a line without its end that does not decode", JSONL, lineA + "\n" + lineB[:10], 1, int64(len(lineA)) + 1, ErrUnfinished, ""},
		{"an unfinished line that is already wrong", JSONL, lineA + "\n" + `{"update":{"data":1,"time":0,"diff":0`, 1, int64(len(lineA)) + 1, ErrUnfinished, ""},
		// A whole JSON object is no prefix of a message: it is the last
		// message, wrong, and reported as such.
		{"a whole object without its end that is not a message", JSONL, lineA + "\n" + `{"update":{"data":1,"time":0,"diff":0}}`, 1, int64(len(lineA)) + 40, nil, `"diff" is zero`},
		{"a whole object without its end with an unknown tag", JSONL, lineA + "\n" + `{"upsert":{}}` + "\r", 1, int64(len(lineA)) + 15, nil, "unknown tag"},
		{"a line without its end that decodes", JSONL, lineA + "\n" + lineB, 2, int64(len(lineA) + len(lineB) + 1), io.EOF, ""},
		{"a blank tail", JSONL, lineA + "\n  ", 1, int64(len(lineA)) + 3, io.EOF, ""},
		{"a msgpack message cut short", Msgpack, string(whole) + string(whole[:len(whole)-1]), 1, int64(len(whole)), ErrUnfinished, ""},
	}
	for _, tc := range tests {
		for name, wrap := range readers {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				r := NewReader(wrap(strings.NewReader(tc.in)), tc.f, "s")
				r.HoldUnfinished()
				var n int
				var err error
				for {
					var m Message
					if err = nextMsg(r, &m); err != nil {
						break
					}
					n++
				}
				var de *DecodeError
				if tc.reason != "" && errors.As(err, &de) && strings.Contains(de.Reason, tc.reason) {
					err = nil // as wanted
				}
				if err != tc.err || n != tc.msgs || r.Offset() != tc.offset {
					t.Fatalf("got %d messages, then %v at offset %d; want %d, %v%s at %d", n, err, r.Offset(), tc.msgs, tc.err, tc.reason, tc.offset)
				}
				if err == ErrUnfinished {
					var m Message
					if again := nextMsg(r, &m); again != ErrUnfinished || r.Offset() != tc.offset {
						t.Fatalf("again: %v at %d", again, r.Offset())
					}
				}
			})
		}
	}
}
