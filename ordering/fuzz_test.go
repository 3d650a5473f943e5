package ordering

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// FuzzParseKey feeds arbitrary created_at and sequence number text to the
// parsers: they must never panic, must fail only with a *KeyError, and
// what they accept must print back to text that parses to the same value.
func FuzzParseKey(f *testing.F) {
	for _, s := range [][2]string{
		{"1700000000", "1"},
		{"1700000000.25", "0042"},
		{"1.7e9", "1234567890123456789012345678901234567890"},
		{"-1.0000000001", "000"},
		{"2023-11-14T22:13:20.123456789Z", "18446744073709551616"},
		{"2023-11-15T00:13:20+02:00", "12x"},
		{"9223372036854775807.9999999999", "-1"},
		{"1e-99999999999", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, at, seq string) {
		ts, err := ParseTimestamp(at)
		checkKeyError(t, err)
		if err == nil {
			back, err := ParseTimestamp(ts.String())
			if err != nil || back != ts {
				t.Fatalf("%q parsed to %v, which reads back as %v (%v)", at, ts, back, err)
			}
			if ts.nsec < 0 || ts.nsec >= 1e9 {
				t.Fatalf("%q: nanoseconds %d out of range", at, ts.nsec)
			}
		}
		n, err := ParseSeqNum(seq)
		checkKeyError(t, err)
		allDigits := seq != "" && strings.Trim(seq, "0123456789") == ""
		if (err == nil) != allDigits {
			t.Fatalf("ParseSeqNum(%q) error %v, want success exactly for digit strings", seq, err)
		}
		if err == nil {
			if strings.HasPrefix(n.digits, "0") || n.String() != strings.TrimLeft(seq, "0") && n.String() != "0" {
				t.Fatalf("ParseSeqNum(%q) = %q, not canonical", seq, n.digits)
			}
			if back, _ := ParseSeqNum(n.String()); back != n || n.Compare(back) != 0 {
				t.Fatalf("%q does not read back", n)
			}
		}
	})
}

// FuzzRecordKey feeds arbitrary bytes as JSON Lines to the reader and to
// RecordKey: no panic, only *KeyError from RecordKey, and the reader
// resumes after every LineError until EOF.
func FuzzRecordKey(f *testing.F) {
	for _, s := range []string{
		`{"meta":{"created_at":1700000000,"sequence_number":"42"}}`,
		`{"meta":{"created_at":"2023-11-14T22:13:20Z","sequence_number":1e3}}`,
		`{"dynamodb":{"ApproximateCreationDateTime":1.5,"SequenceNumber":"007"}}`,
		"\xEF\xBB\xBF{\"meta\":{\"created_at\":1,\"sequence_number\":\"1\"}}\r\n\n{\"meta\":null}",
		`{"meta":{"created_at":1,"sequence_number":"1"}} {}`,
		"[1]\n\xff\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := RecordKey(data)
		checkKeyError(t, err)
		refKey, refErr := recordKeyReference(data)
		if k != refKey || fmt.Sprint(err) != fmt.Sprint(refErr) {
			t.Fatalf("RecordKey(%q) = %v, %v; encoding/json reference says %v, %v", data, k, err, refKey, refErr)
		}
		j := NewJSONLReader(bytes.NewReader(data), "fuzz")
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatal("reader does not reach EOF")
			}
			_, _, err := j.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			var le *LineError
			if err != nil && !errors.As(err, &le) {
				t.Fatalf("unexpected error %v", err)
			}
		}
	})
}

// recordKeyReference is RecordKey written plainly with encoding/json maps,
// for differential fuzzing of the scanner RecordKey uses.
func recordKeyReference(data []byte) (Key, error) {
	if !json.Valid(data) {
		return Key{}, &KeyError{Field: "record", Reason: syntaxReason(data)}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil || top == nil {
		return Key{}, &KeyError{Field: "record", Reason: reasonNotObject}
	}
	sub := func(name string) (map[string]json.RawMessage, error) {
		raw, ok := top[name]
		if !ok {
			return nil, nil
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return nil, &KeyError{Field: name, Text: shorten(string(raw)), Reason: reasonNotObject}
		}
		return m, nil
	}
	meta, err := sub("meta")
	if err != nil {
		return Key{}, err
	}
	_, hasAt := meta["created_at"]
	_, hasSeq := meta["sequence_number"]
	var dynamo map[string]json.RawMessage
	if !hasAt || !hasSeq {
		if dynamo, err = sub("dynamodb"); err != nil {
			return Key{}, err
		}
	}
	at, atName, err := pick(meta["created_at"], metaCreatedAt, dynamo["ApproximateCreationDateTime"], dynamoCreatedAt)
	if err != nil {
		return Key{}, err
	}
	seq, seqName, err := pick(meta["sequence_number"], metaSeq, dynamo["SequenceNumber"], dynamoSeq)
	if err != nil {
		return Key{}, err
	}
	ts, err := jsonTimestamp(at, atName)
	if err != nil {
		return Key{}, err
	}
	n, err := jsonSeqNum(seq, seqName)
	if err != nil {
		return Key{}, err
	}
	return Key{CreatedAt: ts, Seq: n}, nil
}

func checkKeyError(t *testing.T, err error) {
	t.Helper()
	var ke *KeyError
	if err != nil && !errors.As(err, &ke) {
		t.Fatalf("error %v is not a *KeyError", err)
	}
}
