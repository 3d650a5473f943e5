package recovery

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fill sets every field of the struct v points to (recursively) to a
// non-zero value: strings "x", integers n, booleans true, pointers to n,
// slices of structs to one such struct.
func fill(v reflect.Value, n uint64) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(n % math.MaxInt64))
		case reflect.Uint64:
			f.SetUint(n)
		case reflect.Pointer:
			p := reflect.New(f.Type().Elem())
			p.Elem().SetUint(n)
			f.Set(p)
		case reflect.Struct:
			fill(f, n)
		case reflect.Slice: // of structs: one filled element
			e := reflect.New(f.Type().Elem()).Elem()
			fill(e, n)
			f.Set(reflect.Append(reflect.MakeSlice(f.Type(), 0, 1), e))
		default:
			panic("fill: unhandled kind " + f.Kind().String())
		}
	}
}

// keys returns the object keys of a JSON document, nested ones as
// "outer.inner", sorted.
func keys(t *testing.T, doc []byte) []string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			for sk := range sub {
				out = append(out, k+"."+sk)
			}
			continue
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestStatusJSONHasEveryFieldOfStatus: statusJSON must keep up with Status
// (a field added to one and not the other fails here), under the names of
// Status's tags.
func TestStatusJSONHasEveryFieldOfStatus(t *testing.T) {
	var s Status
	fill(reflect.ValueOf(&s).Elem(), 7)
	s.Complete = false
	type plain Status // Status's fields and tags, without its methods
	tagged, err := json.Marshal(plain(s))
	if err != nil {
		t.Fatal(err)
	}
	written, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(t, written), keys(t, tagged); !slices.Equal(got, want) {
		t.Fatalf("JSON keys\n%v\nwant Status's\n%v", got, want)
	}
	var back Status
	if err := json.Unmarshal(written, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Fatalf("round trip:\n%+v\nwant\n%+v", back, s)
	}
}

// TestStatusJSONKeepsTimesExact: times and stated counts beyond 2^53 are
// strings that keep every digit; a complete stream's frontier is null.
func TestStatusJSONKeepsTimesExact(t *testing.T) {
	big := uint64(math.MaxUint64 - 1)
	s := Status{Frontier: big, FirstIncompleteTime: &big, ExpectedUpdates: &big,
		WAL: WALStatus{MinTime: &big, MaxTime: &big, Floor: big}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"frontier":"18446744073709551614"`, `"first_incomplete_time":"18446744073709551614"`,
		`"expected_updates":"18446744073709551614"`, `"min_time":"18446744073709551614"`,
		`"max_time":"18446744073709551614"`, `"floor":"18446744073709551614"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("no %s in %s", k, b)
		}
	}
	s = Status{Complete: true, Frontier: math.MaxUint64}
	if b, _ = json.Marshal(s); !strings.Contains(string(b), `"frontier":null,"complete":true`) ||
		!strings.Contains(string(b), `"first_incomplete_time":null`) {
		t.Fatalf("complete stream: %s", b)
	}
	var back Status
	if err := json.Unmarshal(b, &back); err != nil || !back.Complete || back.Frontier != 0 {
		t.Fatalf("complete stream read back: %+v, %v", back, err)
	}
}
