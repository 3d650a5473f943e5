package cdc

import (
	"strings"
	"testing"
)

func TestAppendCanonicalRewritesToCanonicalForm(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"string stays", `"k3"`, `"k3"`},
		{"number kept as written", `1.50E+3`, `1.50E+3`},
		{"minus zero kept", `-0`, `-0`},
		{"literals", `[true,false,null]`, `[true,false,null]`},
		{"surrounding white space dropped", " \t\r\n{\"a\":1}\n ", `{"a":1}`},
		{"inner white space dropped", `{ "a" : [ 1 , 2 ] , "b" : { } }`, `{"a":[1,2],"b":{}}`},
		{"keys sorted", `{"b":2,"a":1}`, `{"a":1,"b":2}`},
		{"keys sorted by bytes not length", `{"ab":1,"b":2,"a":3}`, `{"a":3,"ab":1,"b":2}`},
		{"upper case before lower case", `{"a":1,"B":2}`, `{"B":2,"a":1}`},
		{"keys sorted by UTF-8 bytes", `{"é":1,"z":2,"€":3}`, `{"z":2,"é":1,"€":3}`},
		{"nested objects sorted", `{"z":{"y":1,"x":2},"a":[{"d":1,"c":2}]}`, `{"a":[{"c":2,"d":1}],"z":{"x":2,"y":1}}`},
		{"keys compared unescaped", `{"\u0062":1,"a":2}`, `{"a":2,"b":1}`},
		{"slash unescaped", `"a\/b"`, `"a/b"`},
		{"unicode escape unescaped", `"\u00e9\u20AC"`, `"é€"`},
		{"surrogate pair joined", `"\ud83d\ude00"`, `"😀"`},
		{"short escapes kept", `"\b\f\n\r\t\"\\"`, `"\b\f\n\r\t\"\\"`},
		{"control escapes lower case", `"\u001F\u0000"`, `"\u001f\u0000"`},
		{"control with short form shortened", `"\u000a\u0009"`, `"\n\t"`},
		{"line separator literal", `"\u2028"`, "\"\u2028\""},
		{"DEL literal", "\"\x7f\"", "\"\x7f\""},
		{"empty containers", `[ ] `, `[]`},
		{"deep nesting at the limit", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendCanonical([]byte("prefix:"), []byte(tc.in))
			if err != nil {
				t.Fatalf("AppendCanonical(%s): %v", tc.in, err)
			}
			if string(got) != "prefix:"+tc.want {
				t.Errorf("AppendCanonical(%s) = %s, want %s", tc.in, got[7:], tc.want)
			}
			if !IsCanonical([]byte(tc.want)) {
				t.Errorf("IsCanonical(%s) = false", tc.want)
			}
		})
	}
}

func TestAppendCanonicalRejectsBadJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "byte 0: unexpected end of input, expected a value"},
		{"only space", `  `, "byte 2: unexpected end of input"},
		{"duplicate key", `{"a":1,"a":2}`, `byte 7: duplicate key "a"`},
		{"duplicate key after reordering", `{"b":1,"a":2,"b":3}`, `byte 13: duplicate key "b"`},
		{"duplicate key spelled differently", `{"a":1,"\u0061":2}`, `byte 7: duplicate key "a"`},
		{"too deep array", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), "nesting deeper than 1000 levels"},
		{"too deep object", strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), "nesting deeper than 1000 levels"},
		{"invalid UTF-8", "\"a\xffb\"", "byte 2: invalid UTF-8 in string"},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", "invalid UTF-8"},
		{"lone high surrogate", `"\ud800x"`, `byte 1: lone surrogate \ud800`},
		{"lone low surrogate", `"\udc00"`, `lone surrogate \udc00`},
		{"high surrogate then non-surrogate", `"\ud800\u0041"`, `lone surrogate`},
		{"raw control character", "\"a\tb\"", "byte 2: control character 0x09 in string"},
		{"NUL in string", "\"a\x00\"", "NUL byte in string"},
		{"NUL outside string", "\x00", "invalid character NUL byte"},
		{"bad escape", `"\x"`, `invalid escape 'x'`},
		{"short unicode escape", `"\u12"`, `invalid \u escape`},
		{"unterminated string", `"abc`, "unexpected end of input in string"},
		{"leading zero", `01`, "byte 1: unexpected data after the value"},
		{"bare minus", `-`, "expected a digit in number"},
		{"trailing decimal point", `1.`, "expected a digit after the decimal point"},
		{"empty exponent", `1e+`, "expected a digit in the exponent"},
		{"plus sign", `+1`, "invalid character '+'"},
		{"NaN", `NaN`, "invalid character 'N'"},
		{"bad literal", `tru`, "invalid literal, expected true"},
		{"trailing comma in array", `[1,]`, "invalid character ']', expected a value"},
		{"trailing comma in object", `{"a":1,}`, "expected a string key"},
		{"missing colon", `{"a" 1}`, "expected ':'"},
		{"non-string key", `{1:2}`, "expected a string key"},
		{"unclosed array", `[1`, "unexpected end of input in array"},
		{"unclosed object", `{"a":1`, "unexpected end of input in object"},
		{"two values", `1 2`, "byte 2: unexpected data after the value"},
		{"single quotes", `'a'`, "invalid character '''"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendCanonical([]byte("keep"), []byte(tc.in))
			if err == nil {
				t.Fatalf("AppendCanonical(%q) = %s, want error containing %q", tc.in, got, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("AppendCanonical(%q) error %q, want it to contain %q", tc.in, err, tc.want)
			}
			if string(got) != "keep" {
				t.Errorf("dst changed on error: %q", got)
			}
		})
	}
}

func TestIsCanonicalRejectsNonCanonicalForms(t *testing.T) {
	for _, in := range []string{
		``, ` 1`, `1 `, `{"b":1,"a":2}`, `{"a":1,"a":1}`, `{"a": 1}`, `[1, 2]`,
		`"\/"`, `"\u0041"`, `"\u000a"`, `"\u001F"`, `"\u0022"`, "\"\xff\"",
		`{"\u0061":1}`, `01`, `1.`, `tru`, `[1,]`, `{"a":1,}`,
	} {
		if IsCanonical([]byte(in)) {
			t.Errorf("IsCanonical(%q) = true", in)
		}
	}
}

func TestAppendCanonicalIsIdempotent(t *testing.T) {
	in := `{"z": [1, {"b": "\u00e9", "a": null}], "a": "\n\"", "m": -1.5e-3}`
	once, err := AppendCanonical(nil, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	twice, err := AppendCanonical(nil, once)
	if err != nil {
		t.Fatal(err)
	}
	if string(once) != string(twice) || !IsCanonical(once) {
		t.Errorf("not idempotent: %s then %s", once, twice)
	}
}

func TestAppendCanonicalCanonicalInputNeedsNoAllocation(t *testing.T) {
	in := []byte(`{"a":[1,2,{"b":"c"}],"d":"e\n"}`)
	dst := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := AppendCanonical(dst, in); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("AppendCanonical of canonical input allocates %v times", allocs)
	}
}

func TestIsCanonicalAcceptsEscapedKeysInOrder(t *testing.T) {
	for _, in := range []string{
		`{"\"":""}`, `{"\u0000":1,"\u0001":2,"\b":3,"\t":4,"\n":5,"\u000b":6,"\f":7,"\r":8,"\"":9,"\\":10,"a":11}`,
		`{"a":1,"a\n":2,"a\"":3}`, `{"\n":1,"\na":2}`,
	} {
		if !IsCanonical([]byte(in)) {
			t.Errorf("IsCanonical(%s) = false", in)
		}
		if got, err := AppendCanonical(nil, []byte(in)); err != nil || string(got) != in {
			t.Errorf("AppendCanonical(%s) = %s, %v", in, got, err)
		}
	}
	for _, in := range []string{`{"\n":1,"\t":2}`, `{"\"":1,"\"":2}`, `{"a\"":1,"a\n":2}`} {
		if IsCanonical([]byte(in)) {
			t.Errorf("IsCanonical(%s) = true", in)
		}
	}
}
