package ordering

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// checkShape learns the shape of a and matches b against it: a record that
// matches must be one scanRecord accepts, with the key values keyValues
// picks.
func checkShape(t interface{ Fatalf(string, ...any) }, a, b []byte) {
	fa, ok := scanRecord(a)
	if !ok {
		return
	}
	at, seq, ok := keyValues(&fa)
	if !ok {
		return
	}
	s := learnShape(a, at, seq)
	if s == nil {
		return
	}
	if gotAt, gotSeq, ok := s.match(a); !ok || !sameSlice(gotAt, at) || !sameSlice(gotSeq, seq) {
		t.Fatalf("%q does not match its own shape (%q %q, want %q %q)", a, gotAt, gotSeq, at, seq)
	}
	gotAt, gotSeq, ok := s.match(b)
	if !ok {
		return
	}
	if !json.Valid(b) {
		t.Fatalf("%q matches the shape of %q but is not valid JSON", b, a)
	}
	fb, ok := scanRecord(b)
	if !ok {
		t.Fatalf("%q matches the shape of %q, scanRecord refuses it", b, a)
	}
	wantAt, wantSeq, ok := keyValues(&fb)
	if !ok || !sameSlice(gotAt, wantAt) || !sameSlice(gotSeq, wantSeq) {
		t.Fatalf("%q matches the shape of %q with values %q %q; scanRecord finds %q %q (%v)", b, a, gotAt, gotSeq, wantAt, wantSeq, ok)
	}
}

// FuzzShape: whatever matches a shape is valid JSON with the key fields
// scanRecord finds.
func FuzzShape(f *testing.F) {
	a := `{"meta":{"created_at":1700000000,"sequence_number":"42"},"x":[true,null,"s"],"n":-1.5e3}`
	for _, b := range []string{
		`{"meta":{"created_at":"2023-11-14T22:13:20Z","sequence_number":43},"x":[false,"t",7],"n":"\u00e9"}`,
		`{"meta":{"created_at":1,"sequence_number":"1"},"x":[true,null,"s\"],"n":-1.5e3}`,
		`{"meta":{"created_at":1,"sequence_number":"1"},"x":[true,null,"s"],"n":01}`,
		`{"meta":{"created_at":1,"sequence_number":"1"},"x":[true,null,"s"],"n":1}x`,
		`{"meta":{"created_at":1,"sequence_number":"1"},"x":[true,null,"s` + "\x01" + `"],"n":1}`,
		`{"meta":{"created_at":1,"sequence_number":{}},"x":[true,null,"s"],"n":1}`,
	} {
		f.Add([]byte(a), []byte(b))
	}
	f.Add([]byte(`{"dynamodb":{"ApproximateCreationDateTime":1,"SequenceNumber":"2"},"meta":{"created_at":3}}`),
		[]byte(`{"dynamodb":{"ApproximateCreationDateTime":"x","SequenceNumber":true},"meta":{"created_at":null}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) { checkShape(t, a, b) })
}

// scalarGen draws a JSON scalar of any kind, or now and then something
// that is not one.
func scalarGen() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return rapid.SampledFrom([]string{
			`"s"`, `""`, `"\u00e9\n"`, `"` + "\xff" + `"`, `"0042"`, `"2023-11-14T22:13:20Z"`, `"` + strings.Repeat("long", 9) + `"`,
			`0`, `-1`, `1700000000.25`, `1e9`, `true`, `false`, `null`,
			`"bad` + "\x01" + `"`, `"\q"`, `01`, `tru`, `{}`, `[1]`, `1.`, `"open`,
		}).Draw(t, "scalar")
	})
}

// TestShapeMatchesRecordsOfTheSameSkeleton: records made from one
// skeleton with any scalars in its holes match the shape of the first, and
// then agree with scanRecord, and those whose scalars are all valid do
// match; their keys are the slow path's.
func TestShapeMatchesRecordsOfTheSameSkeleton(t *testing.T) {
	skeletons := []string{
		`{"meta":{"created_at":%s,"sequence_number":%s},"id":%s,"n":[%s,{"a":%s}]}`,
		`{"dynamodb":{"Keys":{"id":{"S":%s}},"ApproximateCreationDateTime":%s,"SequenceNumber":%s},"e":%s,"f":%s}`,
		` { "meta" : { "sequence_number" : %s , "created_at" : %s } , "x" : %s , "y" : [ %s , %s ] } `,
	}
	rapid.Check(t, func(t *rapid.T) {
		sk := rapid.SampledFrom(skeletons).Draw(t, "skeleton")
		var ks keyScanner
		var k mergeKey
		scalarShape := false // shapes[0] came from a record of scalars only
		var first []byte     // the record shapes[0] came from
		for i := range 8 {
			vals := make([]any, 5)
			valid := true
			for j := range vals {
				v := scalarGen().Draw(t, fmt.Sprintf("value %d.%d", i, j))
				valid = valid && json.Valid([]byte(v)) && v[0] != '{' && v[0] != '['
				vals[j] = v
			}
			rec := []byte(fmt.Sprintf(sk, vals...))
			var matched bool
			if ks.shapes[0] != nil {
				_, _, matched = ks.shapes[0].match(rec)
			}
			if scalarShape && valid && !matched {
				t.Fatalf("%s does not match the shape of %s", rec, first)
			}
			if matched {
				checkShape(t, first, rec)
			}
			before := ks.shapes[0]
			ok := ks.key(rec, &k)
			if ks.shapes[0] != before {
				scalarShape, first = valid, rec
			}
			want, err := recordKeySlow(rec)
			if ok && (err != nil || k.key() != want) {
				t.Fatalf("%s: key %v by shape, slow path %v, %v", rec, k.key(), want, err)
			}
		}
	})
}

// TestKeyScannerBacksOff: a shard whose records never repeat a shape
// stops learning one for each record.
func TestKeyScannerBacksOff(t *testing.T) {
	var ks keyScanner
	var k mergeKey
	learnt := 0
	for i := range 2000 {
		rec := fmt.Sprintf(`{"meta":{"created_at":1,"sequence_number":"1"},"k%d":1}`, i)
		first := ks.shapes[0]
		if !ks.key([]byte(rec), &k) {
			t.Fatal("declined")
		}
		if ks.shapes[0] != first {
			learnt++
		}
	}
	if learnt > 100 {
		t.Fatalf("learnt %d shapes for 2000 records that never repeat one", learnt)
	}
	// A shape that repeats is learnt again, and then matched.
	rec := []byte(`{"meta":{"created_at":1,"sequence_number":"1"},"same":1}`)
	for range maxBackoff + 2 {
		ks.key(rec, &k)
	}
	if _, _, ok := ks.shapes[0].match(rec); !ok {
		t.Fatal("the repeating shape was not learnt")
	}
}

// TestShapeLiteralDiffersAnywhere: a record that differs from its shape's
// literal text in any one byte, for literals of every length up to past
// the word-compared 32, does not match (both where the literal is
// compared in line and where the record is too short for that).
func TestShapeLiteralDiffersAnywhere(t *testing.T) {
	for n := 1; n <= 40; n++ {
		name := strings.Repeat("k", n)
		for _, tail := range []string{"", `,"z":"` + strings.Repeat("z", 40) + `"`} {
			rec := []byte(`{"meta":{"created_at":1,"sequence_number":"2"},"` + name + `":3` + tail + `}`)
			f, _ := scanRecord(rec)
			at, seq, _ := keyValues(&f)
			s := learnShape(rec, at, seq)
			if _, _, ok := s.match(rec); !ok {
				t.Fatalf("%s does not match its own shape", rec)
			}
			start := strings.Index(string(rec), name)
			for i := start - 3; i < start+n+2; i++ { // the literal `"},"kkk":`, less its first bytes
				bad := append([]byte(nil), rec...)
				bad[i] ^= 0x01
				if _, _, ok := s.match(bad); ok {
					t.Fatalf("literal of %d bytes, byte %d changed: %s still matches", n, i, bad)
				}
			}
		}
	}
}
