package ordering

import (
	"errors"
	"strings"
	"testing"
)

func TestRecordKey(t *testing.T) {
	tests := []struct {
		record, at, seq string
	}{
		{`{"meta":{"created_at":1700000000,"sequence_number":"42"}}`, "1700000000", "42"},
		{`{"meta":{"created_at":1700000000.25,"sequence_number":42}}`, "1700000000.25", "42"},
		{`{"meta":{"created_at":"2023-11-14T22:13:20.25Z","sequence_number":"00042"}}`, "1700000000.25", "42"},
		{`{"meta":{"created_at":"1700000000","sequence_number":"1"}}`, "1700000000", "1"},
		{`{"meta":{"created_at":1.7e9,"sequence_number":"1"}}`, "1700000000", "1"},
		// Exact beyond float64: these two differ by 1e-9 s at 1.7e9, which
		// a float64 cannot tell apart.
		{`{"meta":{"created_at":1700000000.000000001,"sequence_number":"1"}}`, "1700000000.000000001", "1"},
		// 40 digits, beyond uint64.
		{`{"meta":{"created_at":1,"sequence_number":"1234567890123456789012345678901234567890"}}`,
			"1", "1234567890123456789012345678901234567890"},
		{`{"meta":{"created_at":1,"sequence_number":1234567890123456789012345678901234567890}}`,
			"1", "1234567890123456789012345678901234567890"},
		// DynamoDB stream record shape, as fallback.
		{`{"eventName":"INSERT","dynamodb":{"ApproximateCreationDateTime":1700000000,"SequenceNumber":"111"}}`,
			"1700000000", "111"},
		// meta wins over dynamodb; each field falls back on its own.
		{`{"meta":{"created_at":5,"sequence_number":"6"},"dynamodb":{"ApproximateCreationDateTime":1,"SequenceNumber":"2"}}`, "5", "6"},
		{`{"meta":{"created_at":5},"dynamodb":{"ApproximateCreationDateTime":1,"SequenceNumber":"2"}}`, "5", "2"},
		// An unused malformed dynamodb member does not matter.
		{`{"meta":{"created_at":5,"sequence_number":"6"},"dynamodb":7}`, "5", "6"},
		// Escaped names, duplicates (the last wins, as in encoding/json),
		// look-alikes nested deeper or inside strings.
		{`{"m\u0065ta":{"created_\u0061t":7,"sequence_number":"8"}}`, "7", "8"},
		{`{"meta":{"created_at":1,"sequence_number":"1"},"meta":{"created_at":2,"sequence_number":"2"}}`, "2", "2"},
		{`{"x":{"meta":{"created_at":9,"sequence_number":"9"}},"s":"\"meta\":{}","meta":{"created_at":3,"sequence_number":"4"}}`, "3", "4"},
		{`{"a":[{"b":"}]"}],"meta":{"n":{"created_at":0},"created_at":3,"sequence_number":"4"}}`, "3", "4"},
		{" \t{\"meta\" : {\"sequence_number\" : \"6\", \"created_at\" : 5}, \"x\": [1,{}]} ", "5", "6"},
	}
	for _, tt := range tests {
		got, err := RecordKey([]byte(tt.record))
		if err != nil {
			t.Errorf("RecordKey(%s): %v", tt.record, err)
			continue
		}
		if want := key(t, tt.at, tt.seq); got != want {
			t.Errorf("RecordKey(%s) = %v, want %v", tt.record, got, want)
		}
	}
}

func TestRecordKeyErrors(t *testing.T) {
	tests := []struct{ record, want string }{
		{`{"meta":{"created_at":1,"sequence_number":"12x"}}`, `meta.sequence_number "12x" is not a decimal integer`},
		{`{"meta":{"created_at":1,"sequence_number":-3}}`, `meta.sequence_number -3 is not a decimal integer`},
		{`{"meta":{"created_at":1,"sequence_number":1.5}}`, `meta.sequence_number 1.5 is not a decimal integer`},
		{`{"meta":{"created_at":1,"sequence_number":""}}`, `meta.sequence_number "" is empty`},
		{`{"meta":{"created_at":1,"sequence_number":null}}`, `meta.sequence_number null must be a number or a string`},
		{`{"meta":{"created_at":"yesterday","sequence_number":"1"}}`,
			`meta.created_at "yesterday" is neither epoch seconds nor an RFC 3339 date-time`},
		{`{"meta":{"created_at":true,"sequence_number":"1"}}`, `meta.created_at true must be a number or a string`},
		{`{"meta":{"created_at":1e400,"sequence_number":"1"}}`, `meta.created_at 1e400 is out of range for epoch seconds`},
		{`{"meta":{"sequence_number":"1"}}`, `meta.created_at is missing (and so is dynamodb.ApproximateCreationDateTime)`},
		{`{"meta":{"created_at":1}}`, `meta.sequence_number is missing (and so is dynamodb.SequenceNumber)`},
		{`{"other":1}`, `meta.created_at is missing (and so is dynamodb.ApproximateCreationDateTime)`},
		{`{"Meta":{"created_at":1,"sequence_number":"1"}}`, `meta.created_at is missing (and so is dynamodb.ApproximateCreationDateTime)`},
		{`{"meta":[1]}`, `meta [1] is not a JSON object`},
		{`{"meta":{"created_at":1},"dynamodb":"x"}`, `dynamodb "x" is not a JSON object`},
		{`[1,2]`, `record is not a JSON object`},
		{`null`, `record is not a JSON object`},
		{`"meta"`, `record is not a JSON object`},
		{`{"meta":`, `record is not valid JSON: unexpected end of JSON input (column 8)`},
		{`{"meta":x}`, `record is not valid JSON: invalid character 'x' looking for beginning of value (column 9)`},
		{`{"a":1} {"b":2}`, `record is not valid JSON: invalid character '{' after top-level value (column 9)`},
		{``, `record is not valid JSON: unexpected end of JSON input (column 0)`},
		{"\xef\xbb\xbf{\"meta\":{}}", `record starts with a byte order mark (EF BB BF), which is allowed only at the start of a file`},
	}
	for _, tt := range tests {
		_, err := RecordKey([]byte(tt.record))
		var ke *KeyError
		if !errors.As(err, &ke) {
			t.Errorf("RecordKey(%s) error = %v, want a *KeyError", tt.record, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("RecordKey(%s) error\n got %s\nwant %s", tt.record, err, tt.want)
		}
	}
}

func TestRecordKeyErrorQuotesShortly(t *testing.T) {
	long := `{"meta":{"created_at":1,"sequence_number":"` + strings.Repeat("7", 10000) + `x"}}`
	_, err := RecordKey([]byte(long))
	if err == nil || len(err.Error()) > 150 || !strings.Contains(err.Error(), "…") {
		t.Fatalf("error %q: want a shortened quote", err)
	}
}
