package ordering

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// checkFastAgainstSlow holds fastRecordKey and scanRecord to the slow path
// on one input: what the fast path accepts, json.Valid accepts as an object
// with the same meta and dynamodb members, and the slow path keys the same.
func checkFastAgainstSlow(t testing.TB, data []byte) {
	f, scanned := scanRecord(data)
	if scanned {
		if !json.Valid(data) {
			t.Fatalf("scanRecord accepts %q, which json.Valid refuses", data)
		}
		if want, ok := keyFieldsReference(data); !ok || !sameFields(f, want) {
			t.Fatalf("scanRecord(%q) = %+v, want %+v", data, f, want)
		}
	} else if json.Valid(data) && strings.Count(string(data), "{")+strings.Count(string(data), "[") <= maxScanDepth {
		if _, isObject := findMembers(data, fieldMeta, fieldDynamo); isObject {
			t.Fatalf("scanRecord refuses %q, a valid object", data)
		}
	}
	k, ok := fastRecordKey(data)
	if !ok {
		return
	}
	want, err := recordKeySlow(data)
	if err != nil {
		t.Fatalf("fastRecordKey(%q) = %v, but the slow path says %v", data, k.key(), err)
	}
	if got := k.key(); got != want {
		t.Fatalf("fastRecordKey(%q) = %v, slow path %v", data, got, want)
	}
}

// keyFieldsReference finds the key fields of valid JSON with findMembers,
// the slow path's scanner.
func keyFieldsReference(data []byte) (f keyFields, ok bool) {
	top, ok := findMembers(data, fieldMeta, fieldDynamo)
	if !ok {
		return f, false
	}
	f.hasMeta, f.hasDyn = top[0] != nil, top[1] != nil
	if f.hasMeta {
		f.meta, f.metaObj = findMembers(top[0], fieldCreatedAt, fieldSeq)
		if !f.metaObj {
			f.meta = members{}
		}
	}
	if f.hasDyn {
		f.dyn, f.dynObj = findMembers(top[1], fieldDynamoTime, fieldDynamoSeq)
		if !f.dynObj {
			f.dyn = members{}
		}
	}
	return f, true
}

func sameFields(a, b keyFields) bool {
	same := func(x, y members) bool {
		for i := range x {
			if string(x[i]) != string(y[i]) || (x[i] == nil) != (y[i] == nil) {
				return false
			}
		}
		return true
	}
	return a.hasMeta == b.hasMeta && a.hasDyn == b.hasDyn && a.metaObj == b.metaObj && a.dynObj == b.dynObj &&
		same(a.meta, b.meta) && same(a.dyn, b.dyn)
}

// FuzzFastRecordKey is the differential fuzz target of the merge's fast
// path against the exact slow one (json.Valid, then findMembers and the
// parsers on strings).
func FuzzFastRecordKey(f *testing.F) {
	for _, s := range []string{
		`{"meta":{"created_at":1700000000,"sequence_number":"42"}}`,
		`{"meta":{"created_at":1700000000.123456789123,"sequence_number":"00042"},"x":[1,2,{"a":null}]}`,
		`{"meta":{"created_at":"2023-11-14T22:13:20.25+02:00","sequence_number":123}}`,
		`{"meta":{"created_at":"2024-02-29T23:59:59Z","sequence_number":"1"}}`,
		`{"meta":{"created_at":"2023-02-29T00:00:00Z","sequence_number":"1"}}`,
		`{"dynamodb":{"ApproximateCreationDateTime":1.5,"SequenceNumber":"007"}}`,
		`{"m\u0065ta":{"created_\u0061t":7,"sequence_number":"8"}}`,
		`{"meta":{"created_at":1,"sequence_number":"1"},"meta":{"created_at":2,"sequence_number":"2"}}`,
		"{\"meta\":{\"created_at\":1,\"sequence_number\":\"1\"},\"s\":\"\xff\\u00e9\\n\"} \r",
		`{"meta":{"created_at":1,"sequence_number":"1"}}x`,
		`{"meta":{"created_at":01,"sequence_number":"1"}}`,
		`{"a":"\u12"}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":tru}`, `[]`, `{}`, `{"a":[1,]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFastAgainstSlow(t, data) })
}

// FuzzFastTimestamp checks the fast created_at parsers against
// ParseTimestamp (and so time.Parse) on any text.
func FuzzFastTimestamp(f *testing.F) {
	for _, s := range []string{
		"1700000000", "0001700000000.5", "1700000000.1234567899", "999999999999999999", "1.", ".5", "1e9",
		"2023-11-14T22:13:20Z", "2023-11-14T22:13:20.123456789123-07:30", "0000-01-01T00:00:00+23:59",
		"9999-12-31T23:59:59.999999999Z", "2023-11-14t22:13:20Z", "2023-11-14T24:00:00Z", "2023-11-14T22:13:20.Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, ok := fastTimestamp([]byte(s))
		if !ok || strings.ContainsAny(s, `"\`) {
			return
		}
		want, err := ParseTimestamp(s)
		if err != nil || ts != want {
			t.Fatalf("fastTimestamp(%q) = %v; ParseTimestamp says %v, %v", s, ts, want, err)
		}
	})
}

// TestFastRFC3339MatchesTimeParse draws date-times near and past every
// field's limits, in every shape time.Parse's RFC 3339 fast path takes
// and a few it does not, and holds the fast parser to ParseTimestamp.
func TestFastRFC3339MatchesTimeParse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		field := func(name string, lo, hi, width int) string {
			return fmt.Sprintf("%0*d", width, rapid.IntRange(lo, hi).Draw(t, name))
		}
		s := field("year", 0, 9999, 4) + "-" + field("month", 0, 13, 2) + "-" + field("day", 0, 32, 2) +
			rapid.SampledFrom([]string{"T", "t", " "}).Draw(t, "T") +
			field("hour", 0, 24, 2) + ":" + field("min", 0, 60, 2) + ":" + field("sec", 0, 60, 2)
		if rapid.Bool().Draw(t, "frac") {
			s += "." + strings.Repeat("7", rapid.IntRange(0, 12).Draw(t, "digits"))
		}
		switch rapid.IntRange(0, 3).Draw(t, "zone") {
		case 0:
			s += "Z"
		case 1:
			s += rapid.SampledFrom([]string{"+", "-"}).Draw(t, "sign") + field("zh", 0, 24, 2) + ":" + field("zm", 0, 60, 2)
		case 2:
			s += "z"
		}
		ts, ok := fastTimestamp([]byte(s))
		want, err := ParseTimestamp(s)
		if ok && (err != nil || ts != want) {
			t.Fatalf("fastTimestamp(%q) = %v; ParseTimestamp says %v, %v", s, ts, want, err)
		}
		if strict, _ := time.Parse(time.RFC3339Nano, s); err == nil && !ok && strictShape(s) {
			t.Fatalf("fastTimestamp refuses %q, which time.Parse reads as %v", s, strict)
		}
	})
}

// strictShape: s has the fixed-width shape fastRFC3339 is meant to take
// (time.Parse takes more: an offset of "+00:60", for one).
func strictShape(s string) bool {
	if len(s) < 20 || s[10] != 'T' || strings.Contains(s, ".Z") {
		return false
	}
	if strings.HasSuffix(s, "Z") {
		return true
	}
	zone := s[len(s)-6:]
	return (zone[0] == '+' || zone[0] == '-') && zone[1:3] < "24" && zone[4:6] < "60"
}

// TestFastRecordKeyTakesTheCommonShapes: the records of TestRecordKey that
// are in a common shape take the fast path, with the slow path's key; the
// others decline to it.
func TestFastRecordKeyTakesTheCommonShapes(t *testing.T) {
	tests := []struct {
		record string
		fast   bool
	}{
		{`{"meta":{"created_at":1700000000,"sequence_number":"42"}}`, true},
		{`{"meta":{"created_at":1700000000.25,"sequence_number":42}}`, true},
		{`{"meta":{"created_at":"2023-11-14T22:13:20.25Z","sequence_number":"00042"}}`, true},
		{`{"meta":{"created_at":"2023-11-15T00:13:20.25+02:00","sequence_number":"0"}}`, true},
		{`{"meta":{"created_at":"1700000000","sequence_number":"1"}}`, true},
		{`{"meta":{"created_at":1,"sequence_number":"1234567890123456789012345678901234567890"}}`, true},
		{`{"eventName":"INSERT","dynamodb":{"ApproximateCreationDateTime":1700000000,"SequenceNumber":"111"}}`, true},
		{`{"meta":{"created_at":5},"dynamodb":{"ApproximateCreationDateTime":1,"SequenceNumber":"2"}}`, true},
		{`{"m\u0065ta":{"created_\u0061t":7,"sequence_number":"8"}}`, true},
		{" \t{\"meta\" : {\"sequence_number\" : \"6\", \"created_at\" : 5}, \"x\": [1,{}]} ", true},
		{`{"meta":{"created_at":1.7e9,"sequence_number":"1"}}`, false},
		{`{"meta":{"created_at":-1.5,"sequence_number":"1"}}`, false},
		{`{"meta":{"created_at":"17\u0030","sequence_number":"1"}}`, false},
		{`{"meta":{"created_at":1,"sequence_number":"12x"}}`, false},
		{`{"meta":{"created_at":1}}`, false},
		{`{"meta":7}`, false},
		{`[1]`, false},
		{`{"meta":{"created_at":1,"sequence_number":"1"}`, false},
	}
	for _, tt := range tests {
		checkFastAgainstSlow(t, []byte(tt.record))
		if _, ok := fastRecordKey([]byte(tt.record)); ok != tt.fast {
			t.Errorf("fastRecordKey(%s): fast path %v, want %v", tt.record, ok, tt.fast)
		}
	}
}

// TestScanRecordDepth: nesting up to maxScanDepth is scanned, deeper
// declines to the slow path (json.Valid allows 10000).
func TestScanRecordDepth(t *testing.T) {
	nest := func(d int) []byte {
		return []byte(`{"a":` + strings.Repeat("[", d-1) + strings.Repeat("]", d-1) + `}`)
	}
	if _, ok := scanRecord(nest(maxScanDepth)); !ok {
		t.Errorf("depth %d refused", maxScanDepth)
	}
	if _, ok := scanRecord(nest(maxScanDepth + 1)); ok {
		t.Errorf("depth %d accepted", maxScanDepth+1)
	}
}

// TestStringStops checks the SWAR test for every byte value in every
// lane, behind plain bytes and behind another stop: the lowest lane it
// marks is the first stop.
func TestStringStops(t *testing.T) {
	isStop := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	for lane := range 8 {
		for c := range 256 {
			for _, fill := range []byte{'a', 0xff, 0x1f, '"'} {
				var w [8]byte
				for i := range w {
					w[i] = 'a'
				}
				for i := lane + 1; i < 8; i++ {
					w[i] = fill
				}
				w[lane] = byte(c)
				want := -1
				for i, b := range w {
					if isStop(b) {
						want = i
						break
					}
				}
				m := stringStops(binary.LittleEndian.Uint64(w[:]))
				got := -1
				if m != 0 {
					got = bits.TrailingZeros64(m) >> 3
				}
				if got != want {
					t.Fatalf("%q: first stop at %d, want %d", w, got, want)
				}
			}
		}
	}
}

// TestNonDigits checks the SWAR digit test for every byte value in every
// lane, behind digits and behind other bytes: the lowest lane it marks is
// the first byte that is not a digit.
func TestNonDigits(t *testing.T) {
	for lane := range 8 {
		for c := range 256 {
			for _, fill := range []byte{'5', 0xff, 0x00, '/', ':'} {
				w := [8]byte{'0', '1', '2', '3', '4', '5', '6', '7'}
				for i := lane + 1; i < 8; i++ {
					w[i] = fill
				}
				w[lane] = byte(c)
				want := -1
				for i, b := range w {
					if b < '0' || b > '9' {
						want = i
						break
					}
				}
				got := -1
				if m := nonDigits(binary.LittleEndian.Uint64(w[:])); m != 0 {
					got = bits.TrailingZeros64(m) >> 3
				}
				if got != want {
					t.Fatalf("%q: first non-digit at %d, want %d", w, got, want)
				}
			}
		}
	}
}
