package cdc

import (
	"reflect"
	"strings"
	"testing"
)

// unbounded returns a progress message with no upper bound.
func unbounded(lower uint64, counts ...Count) Message {
	return Message{Kind: KindProgress, Progress: Progress{Lower: lower, Unbounded: true, Counts: counts}}
}

func update(data string, time uint64, diff int64) Message {
	return NewUpdate([]byte(data), time, diff)
}

// sameMessage compares messages treating nil and empty slices alike.
func sameMessage(a, b Message) bool {
	if len(a.Progress.Counts) == 0 && len(b.Progress.Counts) == 0 {
		a.Progress.Counts, b.Progress.Counts = nil, nil
	}
	if len(a.Update.Data) == 0 && len(b.Update.Data) == 0 {
		a.Update.Data, b.Update.Data = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

var acceptedJSON = []struct {
	name, line string
	want       Message
}{
	{"compact update", `{"update":{"data":"k3","time":123,"diff":-1}}`, update(`"k3"`, 123, -1)},
	{"update with spaces", ` { "update" : { "data" : "k" , "time" : 7 , "diff" : 1 } } `, update(`"k"`, 7, 1)},
	{"update fields in any order", `{"update":{"diff":2,"time":7,"data":"k"}}`, update(`"k"`, 7, 2)},
	{"update with object data canonicalised", `{"update":{"data":{"b":1, "a":[true, null]},"time":7,"diff":1}}`, update(`{"a":[true,null],"b":1}`, 7, 1)},
	{"update with number data kept as written", `{"update":{"data":1.50,"time":7,"diff":1}}`, update(`1.50`, 7, 1)},
	{"update with null data", `{"update":{"data":null,"time":7,"diff":1}}`, update(`null`, 7, 1)},
	{"update with escaped data rewritten", `{"update":{"data":"\u0041\/","time":7,"diff":1}}`, update(`"A/"`, 7, 1)},
	{"time zero", `{"update":{"data":0,"time":0,"diff":1}}`, update(`0`, 0, 1)},
	{"time max", `{"update":{"data":0,"time":18446744073709551615,"diff":1}}`, update(`0`, MaxTime, 1)},
	{"time written 7.0", `{"update":{"data":0,"time":7.0,"diff":1}}`, update(`0`, 7, 1)},
	{"time written 7e0", `{"update":{"data":0,"time":7e0,"diff":1}}`, update(`0`, 7, 1)},
	{"time written 70E-1", `{"update":{"data":0,"time":70E-1,"diff":1}}`, update(`0`, 7, 1)},
	{"time written 0.7e1", `{"update":{"data":0,"time":0.7e1,"diff":1}}`, update(`0`, 7, 1)},
	{"time written -0", `{"update":{"data":0,"time":-0,"diff":1}}`, update(`0`, 0, 1)},
	{"time written 1.8446744073709551615e19", `{"update":{"data":0,"time":1.8446744073709551615e19,"diff":1}}`, update(`0`, MaxTime, 1)},
	{"diff min int64", `{"update":{"data":0,"time":1,"diff":-9223372036854775808}}`, update(`0`, 1, -1<<63)},
	{"diff max int64", `{"update":{"data":0,"time":1,"diff":9223372036854775807}}`, update(`0`, 1, 1<<63-1)},
	{"diff written -2.0", `{"update":{"data":0,"time":1,"diff":-2.0}}`, update(`0`, 1, -2)},
	{"key with escape", `{"update":{"d\u0061ta":0,"time":1,"diff":1}}`, update(`0`, 1, 1)},
	{"compact progress", `{"progress":{"lower":5,"upper":8,"counts":[{"time":7,"count":2}]}}`, NewProgress(5, 8, Count{7, 2})},
	{"progress fields in any order", `{"progress":{"counts":[{"count":2,"time":7}],"upper":8,"lower":5}}`, NewProgress(5, 8, Count{7, 2})},
	{"progress without counts", `{"progress":{"lower":5,"upper":8}}`, NewProgress(5, 8)},
	{"progress with empty counts", `{"progress":{"lower":5,"upper":8,"counts":[]}}`, NewProgress(5, 8)},
	{"progress with null counts", `{"progress":{"lower":5,"upper":8,"counts":null}}`, NewProgress(5, 8)},
	{"progress counts sorted", `{"progress":{"lower":0,"upper":9,"counts":[{"time":7,"count":2},{"time":1,"count":1},{"time":4,"count":3}]}}`, NewProgress(0, 9, Count{1, 1}, Count{4, 3}, Count{7, 2})},
	{"progress zero counts dropped", `{"progress":{"lower":0,"upper":9,"counts":[{"time":7,"count":0},{"time":1,"count":1}]}}`, NewProgress(0, 9, Count{1, 1})},
	{"progress repeated equal count kept once", `{"progress":{"lower":0,"upper":9,"counts":[{"time":7,"count":2},{"time":7,"count":2}]}}`, NewProgress(0, 9, Count{7, 2})},
	{"progress upper absent is unbounded", `{"progress":{"lower":5,"counts":[{"time":70,"count":2}]}}`, unbounded(5, Count{70, 2})},
	{"progress upper null is unbounded", `{"progress":{"lower":5,"upper":null}}`, unbounded(5)},
	{"progress upper [] is unbounded", `{"progress":{"lower":5,"upper":[]}}`, unbounded(5)},
	{"progress antichain bounds", `{"progress":{"lower":[5],"upper":[ 8 ]}}`, NewProgress(5, 8)},
	{"progress count at max time", `{"progress":{"lower":5,"counts":[{"time":18446744073709551615,"count":1}]}}`, unbounded(5, Count{MaxTime, 1})},
	{"seed progress", `{"progress":{"time":7,"count":2}}`, NewProgress(7, 8, Count{7, 2})},
	{"seed progress in any order", `{"progress":{"count":2,"time":7}}`, NewProgress(7, 8, Count{7, 2})},
	{"seed progress zero count", `{"progress":{"time":7,"count":0}}`, NewProgress(7, 8)},
	{"seed progress at max time", `{"progress":{"time":18446744073709551615,"count":1}}`, unbounded(MaxTime, Count{MaxTime, 1})},
	{"finish", `{"finish":{"time":7}}`, NewFinish(7)},
	{"finish with spaces", "\t{ \"finish\" : { \"time\" : 7 } }\r", NewFinish(7)},
}

func TestParseJSONAcceptsEveryShape(t *testing.T) {
	for _, tc := range acceptedJSON {
		t.Run(tc.name, func(t *testing.T) {
			var m Message
			m.Progress.Counts = []Count{{99, 99}} // must be overwritten
			if err := ParseJSON([]byte(tc.line), &m); err != nil {
				t.Fatalf("ParseJSON(%s): %v", tc.line, err)
			}
			if !sameMessage(m, tc.want) {
				t.Errorf("ParseJSON(%s) = %#v, want %#v", tc.line, m, tc.want)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("decoded message does not validate: %v", err)
			}
			var general Message
			if err := parseJSONGeneral([]byte(tc.line), &general); err != nil || !sameMessage(general, tc.want) {
				t.Errorf("general decoder: %v, %v", general, err)
			}
		})
	}
}

func TestParseJSONRejectsBadMessages(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		// Malformed JSON.
		{"empty line", ``, "empty message"},
		{"blank line", `   `, "empty message"},
		{"truncated", `{"update":{"data":"k","time":1,"diff":1}`, "malformed JSON at column 41: unexpected end of line, expected '}'"},
		{"truncated in data", `{"update":{"data":{"a":`, "malformed JSON at column 24: unexpected end of input, expected a value"},
		{"trailing garbage", `{"finish":{"time":1}} x`, "malformed JSON at column 23: unexpected 'x' after the message"},
		{"two messages on a line", `{"finish":{"time":1}}{"finish":{"time":2}}`, "malformed JSON at column 22"},
		{"bad character", `{"update":{"data":"k","time":1,"diff":1,}}`, "malformed JSON at column 41: invalid character '}', expected a string key"},
		{"missing colon", `{"update" {}}`, "malformed JSON at column 11: invalid character '{' after object key, expected ':'"},
		{"bad number", `{"finish":{"time":1.}}`, "malformed JSON at column 21: expected a digit after the decimal point"},
		{"leading zero", `{"finish":{"time":07}}`, "malformed JSON at column 20: invalid character '7', expected ',' or '}'"},
		{"NUL byte", "{\"finish\":{\"time\":1}}\x00", "malformed JSON at column 22: unexpected NUL byte after the message"},
		{"NUL byte in data", "{\"update\":{\"data\":\"a\x00\",\"time\":1,\"diff\":1}}", "malformed JSON at column 21: NUL byte in string"},
		{"invalid UTF-8 in data", "{\"update\":{\"data\":\"\xff\",\"time\":1,\"diff\":1}}", "malformed JSON at column 20: invalid UTF-8 in string"},
		{"lone surrogate in data", `{"update":{"data":"\udead","time":1,"diff":1}}`, `malformed JSON at column 20: lone surrogate \udead`},
		{"duplicate key in data", `{"update":{"data":{"a":1,"a":2},"time":1,"diff":1}}`, `malformed JSON at column 26: duplicate key "a" in object`},
		{"data too deep", `{"update":{"data":` + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1) + `,"time":1,"diff":1}}`, "nesting deeper than 1000 levels"},
		// Shape.
		{"not an object", `[1,2]`, "message is not a JSON object but an array"},
		{"a string", `"update"`, "message is not a JSON object but a string"},
		{"no tag", `{}`, `message has no tag (want "update", "progress" or "finish")`},
		{"unknown tag", `{"insert":{}}`, `unknown tag "insert" (want "update", "progress" or "finish")`},
		{"more than one tag", `{"finish":{"time":1},"update":{}}`, `more than one tag ("finish" and "update")`},
		{"same tag twice", `{"finish":{"time":1},"finish":{"time":1}}`, `more than one tag ("finish" and "finish")`},
		{"body not an object", `{"update":[1]}`, "update: must be an object, not an array"},
		{"body a misspelt literal", `{"update":nope}`, "malformed JSON at column 11: invalid character 'n', expected a value"},
		{"body null", `{"update":null}`, "update: must be an object, not null"},
		// Update fields.
		{"unknown update field", `{"update":{"data":1,"time":1,"diff":1,"x":1}}`, `update: unknown field "x" (want "data", "time" and "diff")`},
		{"duplicate update field", `{"update":{"data":1,"time":1,"time":2,"diff":1}}`, `update: duplicate field "time"`},
		{"duplicate data", `{"update":{"data":1,"data":1,"time":1,"diff":1}}`, `update: duplicate field "data"`},
		{"missing data", `{"update":{"time":1,"diff":1}}`, `update: missing "data"`},
		{"missing time", `{"update":{"data":1,"diff":1}}`, `update: missing "time"`},
		{"missing diff", `{"update":{"data":1,"time":1}}`, `update: missing "diff"`},
		{"zero diff", `{"update":{"data":1,"time":1,"diff":0}}`, `update: "diff" is zero`},
		{"zero diff written -0.0", `{"update":{"data":1,"time":1,"diff":-0.0}}`, `update: "diff" is zero`},
		{"fractional diff", `{"update":{"data":1,"time":1,"diff":0.5}}`, `update: "diff" is not an integer (0.5)`},
		{"diff above int64", `{"update":{"data":1,"time":1,"diff":9223372036854775808}}`, `update: "diff" is outside the int64 range (9223372036854775808)`},
		{"diff below int64", `{"update":{"data":1,"time":1,"diff":-9223372036854775809}}`, `update: "diff" is outside the int64 range`},
		{"diff huge exponent", `{"update":{"data":1,"time":1,"diff":1e400}}`, `update: "diff" is outside the int64 range (1e400)`},
		{"diff a string", `{"update":{"data":1,"time":1,"diff":"1"}}`, `update: "diff" must be a number, not a string`},
		{"negative time", `{"update":{"data":1,"time":-1,"diff":1}}`, `update: "time" is negative (-1)`},
		{"fractional time", `{"update":{"data":1,"time":7.5,"diff":1}}`, `update: "time" is not an integer (7.5)`},
		{"tiny fractional time", `{"update":{"data":1,"time":1e-400,"diff":1}}`, `update: "time" is not an integer (1e-400)`},
		{"time above 2^64-1", `{"update":{"data":1,"time":18446744073709551616,"diff":1}}`, `update: "time" exceeds 18446744073709551615 (18446744073709551616)`},
		{"time huge exponent", `{"update":{"data":1,"time":1e20,"diff":1}}`, `update: "time" exceeds 18446744073709551615 (1e20)`},
		{"time null", `{"update":{"data":1,"time":null,"diff":1}}`, `update: "time" must be a number, not null`},
		{"time an array", `{"update":{"data":1,"time":[1],"diff":1}}`, `update: "time" must be a number, not an array`},
		// Progress fields.
		{"unknown progress field", `{"progress":{"lower":1,"uper":2}}`, `progress: unknown field "uper" (want "lower", "upper" and "counts")`},
		{"duplicate lower", `{"progress":{"lower":1,"lower":1}}`, `progress: duplicate field "lower"`},
		{"missing lower", `{"progress":{"upper":2}}`, `progress: missing "lower"`},
		{"empty progress", `{"progress":{}}`, `progress: missing "lower"`},
		{"lower empty array", `{"progress":{"lower":[],"upper":2}}`, `progress: "lower" is an empty array`},
		{"lower null", `{"progress":{"lower":null}}`, `progress: "lower" must be a number, not null`},
		{"upper two elements", `{"progress":{"lower":1,"upper":[2,3]}}`, `progress: "upper" has more than one element`},
		{"upper a string", `{"progress":{"lower":1,"upper":"2"}}`, `progress: "upper" must be a number, not a string`},
		{"upper equal to lower", `{"progress":{"lower":5,"upper":5}}`, `progress: "upper" (5) is not above "lower" (5)`},
		{"upper below lower", `{"progress":{"lower":5,"upper":[3]}}`, `progress: "upper" (3) is not above "lower" (5)`},
		{"negative lower", `{"progress":{"lower":-5}}`, `progress: "lower" is negative (-5)`},
		{"fractional upper", `{"progress":{"lower":5,"upper":6.5}}`, `progress: "upper" is not an integer (6.5)`},
		{"counts not an array", `{"progress":{"lower":5,"counts":{}}}`, `progress: "counts" must be an array, not an object`},
		{"count entry not an object", `{"progress":{"lower":5,"counts":[7]}}`, `progress: counts[0] must be an object, not a number`},
		{"count entry missing count", `{"progress":{"lower":5,"counts":[{"time":7}]}}`, `progress: counts[0]: missing "count"`},
		{"count entry missing time", `{"progress":{"lower":5,"counts":[{"time":7,"count":1},{"count":7}]}}`, `progress: counts[1]: missing "time"`},
		{"count entry unknown field", `{"progress":{"lower":5,"counts":[{"time":7,"count":1,"n":1}]}}`, `progress: counts[0]: unknown field "n" (want "time" and "count")`},
		{"count entry duplicate field", `{"progress":{"lower":5,"counts":[{"time":7,"time":7,"count":1}]}}`, `progress: counts[0]: duplicate field "time"`},
		{"negative count", `{"progress":{"lower":5,"counts":[{"time":7,"count":-1}]}}`, `progress: counts[0]: "count" is negative (-1)`},
		{"fractional count", `{"progress":{"lower":5,"counts":[{"time":7,"count":1.5}]}}`, `progress: counts[0]: "count" is not an integer (1.5)`},
		{"negative count time", `{"progress":{"lower":5,"counts":[{"time":-7,"count":1}]}}`, `progress: counts[0]: "time" is negative (-7)`},
		{"count below lower", `{"progress":{"lower":5,"upper":8,"counts":[{"time":4,"count":1}]}}`, `progress: count for time 4 is outside [5, 8)`},
		{"count at upper", `{"progress":{"lower":5,"upper":8,"counts":[{"time":8,"count":1}]}}`, `progress: count for time 8 is outside [5, 8)`},
		{"zero count outside range", `{"progress":{"lower":5,"counts":[{"time":1,"count":0}]}}`, `progress: count for time 1 is outside [5, ∞)`},
		{"two different counts for a time", `{"progress":{"lower":5,"upper":8,"counts":[{"time":6,"count":1},{"time":7,"count":1},{"time":6,"count":2}]}}`, `progress: two different counts for time 6 (1 and 2)`},
		{"zero and non-zero count for a time", `{"progress":{"lower":5,"upper":8,"counts":[{"time":6,"count":0},{"time":6,"count":2}]}}`, `progress: two different counts for time 6 (0 and 2)`},
		{"seed without count", `{"progress":{"time":7}}`, `progress: missing "count"`},
		{"seed without time", `{"progress":{"count":7}}`, `progress: missing "time"`},
		{"seed mixed with lower", `{"progress":{"time":7,"count":1,"lower":7}}`, `progress: has both the seed shape's "time"/"count" and "lower"/"upper"/"counts"`},
		{"seed negative count", `{"progress":{"time":7,"count":-1}}`, `progress: "count" is negative (-1)`},
		// Finish fields.
		{"finish missing time", `{"finish":{}}`, `finish: missing "time"`},
		{"finish unknown field", `{"finish":{"time":1,"at":2}}`, `finish: unknown field "at" (want "time")`},
		{"finish duplicate time", `{"finish":{"time":1,"time":1}}`, `finish: duplicate field "time"`},
		{"finish negative time", `{"finish":{"time":-3}}`, `finish: "time" is negative (-3)`},
		{"finish not an object", `{"finish":7}`, `finish: must be an object, not a number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := update(`"old"`, 1, 1)
			err := ParseJSON([]byte(tc.line), &m)
			if err == nil {
				t.Fatalf("ParseJSON(%s) = %v, want error %q", tc.line, m, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseJSON(%s)\n error %q\n want  %q", tc.line, err, tc.want)
			}
			if !reflect.DeepEqual(m, Message{}) {
				t.Errorf("message not reset on error: %v", m)
			}
		})
	}
}

func TestParseJSONCanonicalDataAliasesLine(t *testing.T) {
	line := []byte(`{"update":{"data":"k3","time":1,"diff":1}}`)
	var m Message
	if err := ParseJSON(line, &m); err != nil {
		t.Fatal(err)
	}
	if &m.Update.Data[0] != &line[18] {
		t.Error("canonical data was copied")
	}
	if cap(m.Update.Data) != len(m.Update.Data) {
		t.Error("data capacity not capped: appending would clobber the line")
	}
}

func TestParseJSONCountsAreFreshEachTime(t *testing.T) {
	for _, line := range []string{
		`{"progress":{"lower":5,"upper":8,"counts":[{"time":7,"count":2}]}}`,
		`{"progress":{"lower":5,"upper":8,"counts":[{"count":2,"time":7}]}}`,
		`{"progress":{"time":7,"count":2}}`,
	} {
		var a, b Message
		if err := ParseJSON([]byte(line), &a); err != nil {
			t.Fatal(err)
		}
		if err := ParseJSON([]byte(line), &b); err != nil {
			t.Fatal(err)
		}
		if &a.Progress.Counts[0] == &b.Progress.Counts[0] {
			t.Errorf("%s: counts alias between messages", line)
		}
	}
}

func TestParseJSONTypicalLinesDoNotAllocate(t *testing.T) {
	for _, line := range []string{
		`{"update":{"data":"k3","time":123,"diff":-1}}`,
		`{"update":{"data":{"id":17,"name":"x"},"time":123,"diff":1}}`,
		`{"update": {"data": "k3", "time": 123, "diff": -1}}`,
		`{"finish":{"time":7}}`,
		`{"progress":{"lower":5,"upper":6,"counts":[]}}`,
	} {
		var m Message
		b := []byte(line)
		allocs := testing.AllocsPerRun(100, func() {
			if err := ParseJSON(b, &m); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("ParseJSON(%s) allocates %v times", line, allocs)
		}
	}
}

func TestAppendJSONWritesPrimaryForm(t *testing.T) {
	tests := []struct {
		m    Message
		want string
	}{
		{update(`"k"`, 7, 1), `{"update":{"data":"k","time":7,"diff":1}}`},
		{update(`{"a":[1]}`, MaxTime, -1<<63), `{"update":{"data":{"a":[1]},"time":18446744073709551615,"diff":-9223372036854775808}}`},
		{NewProgress(5, 8, Count{7, 2}), `{"progress":{"lower":5,"upper":8,"counts":[{"time":7,"count":2}]}}`},
		{NewProgress(5, 8, Count{5, 1}, Count{7, 2}), `{"progress":{"lower":5,"upper":8,"counts":[{"time":5,"count":1},{"time":7,"count":2}]}}`},
		{NewProgress(5, 8), `{"progress":{"lower":5,"upper":8,"counts":[]}}`},
		{unbounded(5), `{"progress":{"lower":5,"counts":[]}}`},
		{NewFinish(7), `{"finish":{"time":7}}`},
		{Message{}, `{}`},
	}
	for _, tc := range tests {
		got := AppendJSON([]byte("> "), &tc.m)
		if string(got) != "> "+tc.want {
			t.Errorf("AppendJSON(%v) = %s, want %s", tc.m, got[2:], tc.want)
		}
	}
}

func TestJSONRoundTripIsExact(t *testing.T) {
	for _, tc := range acceptedJSON {
		var m, again Message
		if err := ParseJSON([]byte(tc.line), &m); err != nil {
			t.Fatal(err)
		}
		out := AppendJSON(nil, &m)
		if err := ParseJSON(out, &again); err != nil {
			t.Fatalf("%s: re-parse of %s: %v", tc.name, out, err)
		}
		if !sameMessage(m, again) {
			t.Errorf("%s: round trip changed %v to %v", tc.name, m, again)
		}
		if !parseJSONFast(out, &again, nil) {
			t.Errorf("%s: fast path refused cdclog's own output %s", tc.name, out)
		}
		if again := AppendJSON(nil, &again); string(again) != string(out) {
			t.Errorf("%s: second encoding differs: %s vs %s", tc.name, out, again)
		}
	}
}

func TestFastPathTakesTheSeedShapeWithAZeroCount(t *testing.T) {
	var m Message
	if !parseJSONFast([]byte(`{"progress":{"time":7,"count":0}}`), &m, nil) {
		t.Fatal("fast path refused a zero count")
	}
	if m.Kind != KindProgress || m.Progress.Lower != 7 || m.Progress.Upper != 8 || m.Progress.Counts != nil {
		t.Fatalf("decoded %v", m)
	}
}
