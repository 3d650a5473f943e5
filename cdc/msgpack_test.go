package cdc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// obj is a msgpack map with its keys in a chosen order, duplicates allowed,
// encoded by the reference library; any other value is encoded by it as is.
type obj []kv

type kv struct {
	k any
	v any
}

// raw is msgpack bytes written as they are.
type raw []byte

// mp encodes v with github.com/vmihailenco/msgpack, the reference encoder.
func mp(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	if err := encodeRef(enc, &buf, v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodeRef(enc *msgpack.Encoder, buf *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case obj:
		if err := enc.EncodeMapLen(len(v)); err != nil {
			return err
		}
		for _, e := range v {
			if err := encodeRef(enc, buf, e.k); err != nil {
				return err
			}
			if err := encodeRef(enc, buf, e.v); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if err := enc.EncodeArrayLen(len(v)); err != nil {
			return err
		}
		for _, e := range v {
			if err := encodeRef(enc, buf, e); err != nil {
				return err
			}
		}
		return nil
	case raw:
		buf.Write(v)
		return nil
	}
	return enc.Encode(v)
}

func TestParseMsgpackAcceptsEveryShape(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want Message
	}{
		{"update", obj{{"update", obj{{"data", "k3"}, {"time", 123}, {"diff", -1}}}}, update(`"k3"`, 123, -1)},
		{"update fields in any order", obj{{"update", obj{{"diff", int8(2)}, {"time", uint16(7)}, {"data", "k"}}}}, update(`"k"`, 7, 2)},
		{"update with map data sorted", obj{{"update", obj{{"data", obj{{"b", 1}, {"a", []any{true, nil}}}}, {"time", 7}, {"diff", 1}}}}, update(`{"a":[true,null],"b":1}`, 7, 1)},
		{"integer encodings", obj{{"update", obj{{"data", int64(-5)}, {"time", uint64(MaxTime)}, {"diff", int64(math.MinInt64)}}}}, update(`-5`, MaxTime, math.MinInt64)},
		{"time as exact float", obj{{"update", obj{{"data", 0}, {"time", 7.0}, {"diff", float32(-2)}}}}, update(`0`, 7, -2)},
		{"progress", obj{{"progress", obj{{"lower", 5}, {"upper", 8}, {"counts", []any{obj{{"time", 7}, {"count", 2}}}}}}}, NewProgress(5, 8, Count{7, 2})},
		{"progress counts sorted, zeros dropped", obj{{"progress", obj{{"lower", 0}, {"upper", 9}, {"counts", []any{obj{{"time", 7}, {"count", 2}}, obj{{"count", 0}, {"time", 3}}, obj{{"time", 1}, {"count", 1}}}}}}}, NewProgress(0, 9, Count{1, 1}, Count{7, 2})},
		{"progress without counts", obj{{"progress", obj{{"lower", 5}, {"upper", 8}}}}, NewProgress(5, 8)},
		{"progress nil counts", obj{{"progress", obj{{"lower", 5}, {"upper", 8}, {"counts", nil}}}}, NewProgress(5, 8)},
		{"progress upper absent", obj{{"progress", obj{{"lower", 5}}}}, unbounded(5)},
		{"progress upper nil", obj{{"progress", obj{{"lower", 5}, {"upper", nil}}}}, unbounded(5)},
		{"progress upper []", obj{{"progress", obj{{"lower", []any{5}}, {"upper", []any{}}}}}, unbounded(5)},
		{"progress antichains", obj{{"progress", obj{{"lower", []any{5}}, {"upper", []any{8}}}}}, NewProgress(5, 8)},
		{"seed progress", obj{{"progress", obj{{"time", 7}, {"count", 2}}}}, NewProgress(7, 8, Count{7, 2})},
		{"seed progress at max time", obj{{"progress", obj{{"time", uint64(MaxTime)}, {"count", 1}}}}, unbounded(MaxTime, Count{MaxTime, 1})},
		{"finish", obj{{"finish", obj{{"time", 7}}}}, NewFinish(7)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mp(t, tc.in)
			var m Message
			n, err := ParseMsgpack(append(b, 0xc1, 0xc1), &m)
			if err != nil {
				t.Fatalf("ParseMsgpack(% x): %v", b, err)
			}
			if n != len(b) {
				t.Errorf("consumed %d bytes, want %d", n, len(b))
			}
			if !sameMessage(m, tc.want) {
				t.Errorf("got %#v, want %#v", m, tc.want)
			}
		})
	}
}

func TestParseMsgpackConvertsDataToCanonicalJSON(t *testing.T) {
	tests := []struct {
		name string
		data any
		want string
	}{
		{"nil", nil, `null`},
		{"booleans", []any{true, false}, `[true,false]`},
		{"integers", []any{0, 127, 128, -1, -32, -33, int64(math.MinInt64), uint64(math.MaxUint64)}, `[0,127,128,-1,-32,-33,-9223372036854775808,18446744073709551615]`},
		{"float64", []any{1.5, 0.1, math.Copysign(0, -1), 1e21, 1e-7, 7.0}, `[1.5,0.1,-0,1e+21,1e-07,7]`},
		{"float32 shortest", float32(0.1), `0.1`},
		{"string escapes", "a\"b\\c\nd\x01é", `"a\"b\\c\nd\u0001é"`},
		{"map keys sorted by bytes", obj{{"é", 1}, {"b", 2}, {"B", 3}, {"", 4}}, `{"":4,"B":3,"b":2,"é":1}`},
		{"nested", obj{{"z", []any{obj{{"y", 1}, {"x", nil}}}}, {"a", obj{}}}, `{"a":{},"z":[{"x":null,"y":1}]}`},
		{"str8", strings.Repeat("x", 40), `"` + strings.Repeat("x", 40) + `"`},
		{"str16", strings.Repeat("x", 300), `"` + strings.Repeat("x", 300) + `"`},
		{"array16", make([]any, 20), `[` + strings.Repeat("null,", 19) + `null]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mp(t, obj{{"update", obj{{"data", tc.data}, {"time", 1}, {"diff", 1}}}})
			var m Message
			if _, err := ParseMsgpack(b, &m); err != nil {
				t.Fatal(err)
			}
			if string(m.Update.Data) != tc.want {
				t.Errorf("data = %s, want %s", m.Update.Data, tc.want)
			}
			if !IsCanonical(m.Update.Data) {
				t.Errorf("data %s is not canonical", m.Update.Data)
			}
		})
	}
}

func TestParseMsgpackRejectsBadMessages(t *testing.T) {
	upd := func(fields ...kv) any { return obj{{"update", obj(fields)}} }
	prog := func(fields ...kv) any { return obj{{"progress", obj(fields)}} }
	data := func(v any) any { return upd(kv{"data", v}, kv{"time", 1}, kv{"diff", 1}) }
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"not a map", []any{1}, "message is not a map but an array"},
		{"no tag", obj{}, `message has no tag (want "update", "progress" or "finish")`},
		{"unknown tag", obj{{"insert", obj{}}}, `unknown tag "insert"`},
		{"tag not a string", obj{{1, obj{}}}, "message key must be a string (a map key), not an integer"},
		{"more than one tag", obj{{"finish", obj{{"time", 1}}}, {"update", obj{}}}, `more than one tag ("finish" and "update")`},
		{"body not a map", obj{{"update", []any{}}}, "update: must be a map, not an array"},
		{"unknown field", upd(kv{"data", 1}, kv{"x", 1}), `update: unknown field "x"`},
		{"duplicate field", upd(kv{"time", 1}, kv{"time", 1}), `update: duplicate field "time"`},
		{"missing data", upd(kv{"time", 1}, kv{"diff", 1}), `update: missing "data"`},
		{"missing time", upd(kv{"data", 1}, kv{"diff", 1}), `update: missing "time"`},
		{"missing diff", upd(kv{"data", 1}, kv{"time", 1}), `update: missing "diff"`},
		{"zero diff", upd(kv{"data", 1}, kv{"time", 1}, kv{"diff", 0}), `update: "diff" is zero`},
		{"fractional diff", upd(kv{"data", 1}, kv{"time", 1}, kv{"diff", 0.5}), `update: "diff" is not an integer (0.5)`},
		{"diff above int64", upd(kv{"data", 1}, kv{"time", 1}, kv{"diff", uint64(1 << 63)}), `update: "diff" is outside the int64 range (9223372036854775808)`},
		{"diff a string", upd(kv{"data", 1}, kv{"time", 1}, kv{"diff", "1"}), `update: "diff" must be a number, not a string`},
		{"negative time", upd(kv{"data", 1}, kv{"time", -1}, kv{"diff", 1}), `update: "time" is negative (-1)`},
		{"fractional time", upd(kv{"data", 1}, kv{"time", 7.5}, kv{"diff", 1}), `update: "time" is not an integer (7.5)`},
		{"NaN time", upd(kv{"data", 1}, kv{"time", math.NaN()}, kv{"diff", 1}), `update: "time" is not an integer (NaN)`},
		{"time beyond uint64", upd(kv{"data", 1}, kv{"time", 1e20}, kv{"diff", 1}), `update: "time" exceeds 18446744073709551615 (1e+20)`},
		{"time nil", upd(kv{"data", 1}, kv{"time", nil}, kv{"diff", 1}), `update: "time" must be a number, not nil`},
		{"data bin", data([]byte{1}), `update: "data" holds binary data`},
		{"data ext", data(raw{0xd4, 0x01, 0x00}), `update: "data" holds a msgpack extension`},
		{"data NaN", data(math.NaN()), `update: "data" holds NaN`},
		{"data Inf", data(math.Inf(-1)), `update: "data" holds -Inf`},
		{"data non-string key", data(obj{{1, 2}}), `update: "data" map key must be a string (a map key), not an integer`},
		{"data duplicate key", data(obj{{"a", 1}, {"a", 2}}), `update: "data" has duplicate map key "a"`},
		{"data invalid UTF-8", data("\xff"), `update: "data" has a string that is not valid UTF-8`},
		{"data key invalid UTF-8", data(obj{{"\xff", 1}}), `update: "data" has a map key that is not valid UTF-8`},
		{"data too deep", data(raw(bytes.Repeat([]byte{0x91}, MaxDepth+1))), `update: "data" is nested deeper than 1000 levels`},
		{"invalid type byte", data(raw{0xc1}), "malformed msgpack at byte 14 of the message: invalid type byte 0xc1"},
		{"length beyond the limit", data(raw{0xdb, 0xff, 0xff, 0xff, 0xff}), "malformed msgpack at byte 14 of the message: length 4294967295 exceeds the 16 MiB message limit"},
		{"missing lower", prog(kv{"upper", 2}), `progress: missing "lower"`},
		{"lower empty array", prog(kv{"lower", []any{}}), `progress: "lower" is an empty array`},
		{"upper two elements", prog(kv{"lower", 1}, kv{"upper", []any{2, 3}}), `progress: "upper" has more than one element`},
		{"upper not above lower", prog(kv{"lower", 5}, kv{"upper", 5}), `progress: "upper" (5) is not above "lower" (5)`},
		{"counts not an array", prog(kv{"lower", 5}, kv{"counts", obj{}}), `progress: "counts" must be an array, not a map`},
		{"count entry not a map", prog(kv{"lower", 5}, kv{"counts", []any{7}}), `progress: counts[0] must be a map, not an integer`},
		{"count entry missing count", prog(kv{"lower", 5}, kv{"counts", []any{obj{{"time", 7}}}}), `progress: counts[0]: missing "count"`},
		{"count entry unknown field", prog(kv{"lower", 5}, kv{"counts", []any{obj{{"time", 7}, {"n", 1}}}}), `progress: counts[0]: unknown field "n"`},
		{"negative count", prog(kv{"lower", 5}, kv{"counts", []any{obj{{"time", 7}, {"count", -1}}}}), `progress: counts[0]: "count" is negative (-1)`},
		{"count outside range", prog(kv{"lower", 5}, kv{"upper", 6}, kv{"counts", []any{obj{{"time", 7}, {"count", 1}}}}), `progress: count for time 7 is outside [5, 6)`},
		{"two counts for a time", prog(kv{"lower", 5}, kv{"counts", []any{obj{{"time", 7}, {"count", 1}}, obj{{"time", 7}, {"count", 2}}}}), `progress: two different counts for time 7 (1 and 2)`},
		{"seed mixed", prog(kv{"time", 5}, kv{"count", 1}, kv{"upper", 6}), `progress: has both the seed shape's`},
		{"finish missing time", obj{{"finish", obj{}}}, `finish: missing "time"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mp(t, tc.in)
			m := update(`"old"`, 1, 1)
			n, err := ParseMsgpack(b, &m)
			if err == nil {
				t.Fatalf("ParseMsgpack(% x) = %v, want error %q", b, m, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseMsgpack(% x)\n error %q\n want  %q", b, err, tc.want)
			}
			if n != 0 || !reflect.DeepEqual(m, Message{}) {
				t.Errorf("on error: n = %d, m = %v", n, m)
			}
		})
	}
}

func TestParseMsgpackReportsTruncationAsUnexpectedEOF(t *testing.T) {
	full := mp(t, obj{{"progress", obj{{"lower", 5}, {"upper", 300}, {"counts", []any{obj{{"time", 7}, {"count", 2}}}}}}})
	full = append(full, mp(t, obj{{"update", obj{{"data", obj{{"k", strings.Repeat("x", 40)}}}, {"time", uint64(1 << 40)}, {"diff", -1000}}}})...)
	for cut := 0; cut < len(full); cut++ {
		var m Message
		n, err := ParseMsgpack(full[:cut], &m)
		if cut < len(full)/2 && n > 0 {
			continue // the first message is whole
		}
		if n > 0 && n <= cut {
			continue
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d: err = %v, want io.ErrUnexpectedEOF", cut, err)
		}
	}
}

// loose decodes b with the reference decoder into generic values, with
// every integer as int64 or uint64 and every float as float64.
func loose(t *testing.T, b []byte) any {
	t.Helper()
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.UseLooseInterfaceDecoding(true)
	v, err := dec.DecodeInterface()
	if err != nil {
		t.Fatalf("reference decoder: %v on % x", err, b)
	}
	return normalise(v)
}

// normalise makes numbers comparable: integers that fit as int64.
func normalise(v any) any {
	switch v := v.(type) {
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v)
		}
	case []any:
		for i := range v {
			v[i] = normalise(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = normalise(v[k])
		}
	}
	return v
}

func TestAppendMsgpackDecodesWithReferenceLibrary(t *testing.T) {
	tests := []struct {
		m    Message
		want any
	}{
		{update(`{"b":[1,-2,1.5,"x\n",null,true],"a":18446744073709551615,"c":-0,"d":1e+21}`, 7, -300),
			map[string]any{"update": map[string]any{
				"data": map[string]any{"a": uint64(math.MaxUint64), "b": []any{int64(1), int64(-2), 1.5, "x\n", nil, true}, "c": math.Copysign(0, -1), "d": 1e21},
				"time": int64(7), "diff": int64(-300)}}},
		{update(`"k"`, MaxTime, math.MinInt64), map[string]any{"update": map[string]any{"data": "k", "time": uint64(MaxTime), "diff": int64(math.MinInt64)}}},
		{NewProgress(5, 8, Count{7, 2}), map[string]any{"progress": map[string]any{"lower": int64(5), "upper": int64(8), "counts": []any{map[string]any{"time": int64(7), "count": int64(2)}}}}},
		{unbounded(5), map[string]any{"progress": map[string]any{"lower": int64(5), "counts": []any{}}}},
		{NewFinish(1 << 40), map[string]any{"finish": map[string]any{"time": int64(1 << 40)}}},
	}
	for _, tc := range tests {
		got := loose(t, msgpackOf(&tc.m))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("AppendMsgpack(%v) decodes to\n %#v\nwant\n %#v", tc.m, got, tc.want)
		}
	}
}

func TestAppendMsgpackRefusesDataItCannotCarryExactly(t *testing.T) {
	for _, tc := range []struct {
		data string
		why  string // "" when msgpack carries it exactly
	}{
		{`0.1`, ""},
		{`0.10000000000000000001`, "number 0.10000000000000000001 would be read back as 0.1"},
		{`1e400`, "number 1e400 is beyond the range of a float64"},
		{`-1e400`, "number -1e400 is beyond the range of a float64"},
		{`7.0`, "number 7.0 would be read back as 7"},
		{`1E2`, "number 1E2 would be read back as 100"},
		{`1e21`, "number 1e21 would be read back as 1e+21"},
		{`1e+21`, ""},
		{`1.5`, ""},
		{`-0`, ""},
		{`18446744073709551615`, ""},
		{`18446744073709551616`, "number 18446744073709551616 would be read back as 1.8446744073709552e+19"},
		{`-9223372036854775808`, ""},
		{`-9223372036854775809`, "would be read back as -9.223372036854776e+18"},
		{`{"a":["x",{"b":2.50}]}`, "number 2.50 would be read back as 2.5"},
		{`"1e400"`, ""}, // a string, not a number
	} {
		t.Run(tc.data, func(t *testing.T) {
			m := update(tc.data, 7, 1)
			b, err := AppendMsgpack([]byte("prefix"), &m)
			if cerr := CheckMsgpack(&m); fmt.Sprint(cerr) != fmt.Sprint(err) {
				t.Errorf("CheckMsgpack says %v, AppendMsgpack %v", cerr, err)
			}
			if tc.why == "" {
				var again Message
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ParseMsgpack(b[len("prefix"):], &again); err != nil || !sameMessage(m, again) {
					t.Fatalf("round trip gives %v, %v", again, err)
				}
				return
			}
			if !errors.Is(err, ErrMsgpackInexact) {
				t.Fatalf("error %v, want ErrMsgpackInexact", err)
			}
			for _, want := range []string{tc.why, "update(" + tc.data, "t=7", "JSON Lines"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if string(b) != "prefix" {
				t.Errorf("dst changed to % x", b)
			}
		})
	}
}

// Two data that JSON keeps apart must not become one update in msgpack:
// the output would then hold a time with fewer distinct updates than its
// count says.
func TestMsgpackWriterRefusesToMergeDistinctData(t *testing.T) {
	var in Message
	if err := ParseJSON([]byte(`{"update":{"data":0.10000000000000000001,"time":1,"diff":1}}`), &in); err != nil {
		t.Fatal(err)
	}
	if string(in.Update.Data) == "0.1" {
		t.Fatal("JSON merges 0.10000000000000000001 with 0.1")
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, Msgpack)
	ok := update(`0.1`, 1, 1)
	if err := w.Write(&ok); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&in); !errors.Is(err, ErrMsgpackInexact) {
		t.Fatalf("Write(%v) = %v, want ErrMsgpackInexact", in, err)
	}
	fin := NewFinish(2)
	if err := w.Write(&fin); err != nil {
		t.Fatalf("the writer is not usable after refusing a message: %v", err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := append(msgpackOf(&ok), msgpackOf(&fin)...); !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("wrote % x, want % x", buf.Bytes(), want)
	}
}

// The write-ahead log's encoding keeps such data exactly.
func TestBinaryKeepsDataMsgpackCannotCarry(t *testing.T) {
	for _, data := range []string{`0.10000000000000000001`, `1e400`, `7.0`, `{"a":[1E2,-0.0]}`} {
		m := update(data, 3, -1)
		var again Message
		if _, err := ParseBinary(AppendBinary(nil, &m), &again); err != nil || !sameMessage(m, again) {
			t.Errorf("binary round trip of %s gives %v, %v", data, again, err)
		}
	}
}

func TestAppendMsgpackWritesKeysInCanonicalOrder(t *testing.T) {
	m := update(`{"a":1,"b":{"x":1,"y":2},"é":3}`, 1, 1)
	b := msgpackOf(&m)
	var again Message
	if _, err := ParseMsgpack(b, &again); err != nil {
		t.Fatal(err)
	}
	// The data map's keys appear in the bytes in canonical order.
	ia, ib, ie := bytes.Index(b, []byte{0xa1, 'a'}), bytes.Index(b, []byte{0xa1, 'b'}), bytes.Index(b, []byte("\xa2é"))
	if !(ia < ib && ib < ie) || ia < 0 {
		t.Errorf("keys out of order in % x", b)
	}
}

func TestAppendMsgpackLongContainersAndStrings(t *testing.T) {
	long := `"` + strings.Repeat("ab\\n", 100) + `"` // escapes shrink the string
	var sb strings.Builder
	sb.WriteString("{")
	for i := 0; i < 20; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`"k` + string(rune('a'+i)) + `":[` + strings.Repeat("1,", 16) + `1]`)
	}
	sb.WriteString("}")
	for _, data := range []string{long, sb.String(), `"` + strings.Repeat("x", 70000) + `"`} {
		m := update(data, 1, 1)
		b := msgpackOf(&m)
		loose(t, b) // decodes
		var again Message
		if _, err := ParseMsgpack(b, &again); err != nil {
			t.Fatal(err)
		}
		if string(again.Update.Data) != data {
			t.Errorf("round trip changed data of length %d", len(data))
		}
	}
}

func TestMsgpackRoundTripKeepsMessages(t *testing.T) {
	msgs := []Message{
		update(`"k3"`, 123, -1),
		update(`{"a":[true,null,"x"],"b":-17,"c":{"d":1.25}}`, 0, 1),
		update(`-0`, MaxTime, math.MaxInt64),
		NewProgress(5, 8, Count{5, 1}, Count{7, 2}),
		NewProgress(0, 1),
		unbounded(MaxTime),
		NewFinish(0),
	}
	var buf []byte
	for i := range msgs {
		buf = appendMsgpackOf(buf, &msgs[i])
	}
	for i := range msgs {
		var m Message
		n, err := ParseMsgpack(buf, &m)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		buf = buf[n:]
		if !sameMessage(m, msgs[i]) {
			t.Errorf("round trip changed %v to %v", msgs[i], m)
		}
	}
	if len(buf) != 0 {
		t.Errorf("%d bytes left over", len(buf))
	}
}

func TestParseMsgpackAgreesWithReferenceEncoderOnGenericMaps(t *testing.T) {
	// Plain Go maps, encoded by the reference library in its own key order
	// and integer encodings.
	in := map[string]any{"update": map[string]any{
		"data": map[string]any{"name": "x", "tags": []string{"a", "b"}, "n": int32(-70000), "f": float32(2.5)},
		"time": uint32(1 << 31), "diff": int16(-300),
	}}
	b, err := msgpack.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if _, err := ParseMsgpack(b, &m); err != nil {
		t.Fatal(err)
	}
	want := update(`{"f":2.5,"n":-70000,"name":"x","tags":["a","b"]}`, 1<<31, -300)
	if !sameMessage(m, want) {
		t.Errorf("got %v, want %v", m, want)
	}
}

func TestMsgpackFastPathTakesWhatAppendMsgpackWrites(t *testing.T) {
	msgs := []Message{
		NewUpdate([]byte(`"key-17"`), 7, -2),
		NewUpdate([]byte(`"a long key that needs str8, more than thirty-one bytes"`), 1<<40, 1<<40),
		NewProgress(5, 8, Count{Time: 5, Count: 1}, Count{Time: 7, Count: 300}),
		NewProgress(0, 1),
	}
	for _, m := range msgs {
		b := msgpackOf(&m)
		var got Message
		n, ok := fastMsgpack(b, &got, nil, nil)
		if !ok || n != len(b) || !sameMessage(got, m) {
			t.Errorf("%v: fast path took %d of %d bytes (ok %v), got %v", m, n, len(b), ok, got)
		}
	}
	for _, m := range []Message{NewUpdate([]byte(`{"id":1}`), 1, 1), NewUpdate([]byte(`"é"`), 1, 1), {Kind: KindProgress, Progress: Progress{Lower: 3, Unbounded: true}}} {
		var got Message
		if _, ok := fastMsgpack(msgpackOf(&m), &got, nil, nil); ok {
			t.Errorf("%v: the fast path should leave it to the general decoder", m)
		}
	}
}
