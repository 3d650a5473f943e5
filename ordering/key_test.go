package ordering

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

func mustTS(t tb, s string) Timestamp {
	t.Helper()
	ts, err := ParseTimestamp(s)
	if err != nil {
		t.Fatalf("ParseTimestamp(%q): %v", s, err)
	}
	return ts
}

func mustSeq(t tb, s string) SeqNum {
	t.Helper()
	n, err := ParseSeqNum(s)
	if err != nil {
		t.Fatalf("ParseSeqNum(%q): %v", s, err)
	}
	return n
}

func TestTimestampCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1700000000", "1700000000", 0},
		{"1700000000", "1700000000.0", 0},
		{"1700000000", "01700000000.000", 0},
		{"1700000000", "1.7e9", 0},
		{"1700000000", "17E8", 0},
		{"1.70000000025e9", "1700000000.25", 0},
		{"2023-11-15T00:13:20.25+02:00", "1.70000000025e9", 0},
		{"1700000000.25", "1700000000.250000000", 0},
		{"1700000000.25", "1700000000.2500000001", 0}, // beyond ns: floored
		{"1700000000.25", "1700000000.249999999", 1},
		{"1700000000.5", "1700000001", -1},
		// RFC 3339 against epoch seconds.
		{"2023-11-14T22:13:20Z", "1700000000", 0},
		{"2023-11-14T22:13:20.25Z", "1700000000.25", 0},
		{"2023-11-15T00:13:20.25+02:00", "1700000000.25", 0},
		{"2023-11-14T17:13:20.25-05:00", "2023-11-14T22:13:20.25Z", 0},
		// RFC 3339 lets T and Z be lower case.
		{"2023-11-14t22:13:20z", "1700000000", 0},
		{"2023-11-14t22:13:20.5+01:00", "2023-11-14T21:13:20.5Z", 0},
		{"2023-11-14T22:13:20.000000001Z", "1700000000", 1},
		{"2023-11-14T22:13:20.0000000019Z", "1700000000.000000001", 0},
		{"2023-11-14T22:13:21Z", "1700000000.999999999", 1},
		{"1969-12-31T23:59:59.5Z", "-0.5", 0},
		// Negative epochs floor toward the past, like RFC 3339.
		{"-1.5", "-2", 1},
		{"-1.5", "-1", -1},
		{"-1.0000000001", "-1.000000001", 0},
		{"-0", "0", 0},
		{"0.0000000001", "0", 0},
		{"1e-30", "0", 0},
		{"9223372036854775807.999999999", "9223372036854775807", 1},
	}
	for _, tt := range tests {
		a, b := mustTS(t, tt.a), mustTS(t, tt.b)
		if got := a.Compare(b); got != tt.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := b.Compare(a); got != -tt.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

func TestTimestampString(t *testing.T) {
	tests := map[string]string{
		"1700000000":             "1700000000",
		"1700000000.250":         "1700000000.25",
		"-1.25":                  "-1.25",
		"-0.25":                  "-0.25",
		"0":                      "0",
		"2023-11-14T22:13:20Z":   "1700000000",
		"-9223372036854775808":   "-9223372036854775808",
		"-9223372036854775807.5": "-9223372036854775807.5",
	}
	for in, want := range tests {
		if got := mustTS(t, in).String(); got != want {
			t.Errorf("ParseTimestamp(%q).String() = %q, want %q", in, got, want)
		}
	}
}

func TestAnExponentOutweighsAnyRunOfZeros(t *testing.T) {
	zeros := strings.Repeat("0", 1<<21)
	for _, tc := range []struct {
		in   string
		want Timestamp
	}{
		{"0." + zeros + "1e2097157", Timestamp{sec: 10_000}},
		{"1" + zeros + "e-2097146", Timestamp{sec: 1_000_000}},
	} {
		got, err := ParseTimestamp(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseTimestamp(%.20s...%s) = %v, %v; want %v", tc.in, tc.in[len(tc.in)-10:], got, err, tc.want)
		}
	}
}

func TestParseTimestampErrors(t *testing.T) {
	tests := map[string]string{
		"":                       `created_at "" is empty`,
		"abc":                    `created_at "abc" is neither epoch seconds nor an RFC 3339 date-time`,
		"1.":                     `created_at "1." is not a decimal number`,
		"1.2.3":                  `created_at "1.2.3" is not a decimal number`,
		"-":                      `created_at "-" is not a decimal number`,
		".5":                     `created_at ".5" is not a decimal number`,
		"1e":                     `created_at "1e" is not a decimal number`,
		"1e+":                    `created_at "1e+" is not a decimal number`,
		"9223372036854775808":    `created_at "9223372036854775808" is out of range for epoch seconds`,
		"-9223372036854775808.5": `created_at "-9223372036854775808.5" is out of range for epoch seconds`,
		"9223372036854775808.5":  `created_at "9223372036854775808.5" is out of range for epoch seconds`,
		"-9223372036854775809":   `created_at "-9223372036854775809" is out of range for epoch seconds`,
		"1e19":                   `created_at "1e19" is out of range for epoch seconds`,
		"1e99999999999999999999": `created_at "1e99999999999999999999" is out of range for epoch seconds`,
		"2023-11-14T22:13:20":    `created_at "2023-11-14T22:13:20" is neither epoch seconds nor an RFC 3339 date-time`,
		"2023-11-14 22:13:20Z":   `created_at "2023-11-14 22:13:20Z" is neither epoch seconds nor an RFC 3339 date-time`,
		"2023-02-30T00:00:00Z":   `created_at "2023-02-30T00:00:00Z" is neither epoch seconds nor an RFC 3339 date-time`,
		"+1":                     `created_at "+1" is neither epoch seconds nor an RFC 3339 date-time`,
		// What time.Parse takes but RFC 3339 does not.
		"2023-11-14T7:13:20Z":       `created_at "2023-11-14T7:13:20Z" is neither epoch seconds nor an RFC 3339 date-time`,
		"2023-11-14T22:13:20,5Z":    `created_at "2023-11-14T22:13:20,5Z" is neither epoch seconds nor an RFC 3339 date-time`,
		"2023-11-14T22:13:20+24:00": `created_at "2023-11-14T22:13:20+24:00" is neither epoch seconds nor an RFC 3339 date-time`,
		"2023-11-14T22:13:20+00:60": `created_at "2023-11-14T22:13:20+00:60" is neither epoch seconds nor an RFC 3339 date-time`,
	}
	for in, want := range tests {
		_, err := ParseTimestamp(in)
		var ke *KeyError
		if !errors.As(err, &ke) {
			t.Errorf("ParseTimestamp(%q) error = %v, want a *KeyError", in, err)
			continue
		}
		if err.Error() != want {
			t.Errorf("ParseTimestamp(%q) error = %q, want %q", in, err, want)
		}
	}
	// Zero with an absurd exponent is still zero, not an error.
	if ts := mustTS(t, "0e99999999999999999999"); ts != (Timestamp{}) {
		t.Errorf("0e99999999999999999999 = %v, want 0", ts)
	}
}

func TestSeqNumCompare(t *testing.T) {
	const forty = "1234567890123456789012345678901234567890"
	tests := []struct {
		a, b string
		want int
	}{
		{"1", "1", 0},
		{"0", "000", 0},
		{"007", "7", 0},
		{"9", "10", -1},    // a string comparison would say +1
		{"0009", "10", -1}, // leading zeros do not make it longer
		{"18446744073709551615", "18446744073709551616", -1}, // across 2^64
		{"99999999999999999999", "100000000000000000000", -1},
		{forty, forty, 0},
		{forty, "0" + forty, 0},
		{forty, "1234567890123456789012345678901234567891", -1},
		{forty, "999999999999999999999999999999999999999", 1},
		{"0", "1", -1},
	}
	for _, tt := range tests {
		a, b := mustSeq(t, tt.a), mustSeq(t, tt.b)
		if got := a.Compare(b); got != tt.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := b.Compare(a); got != -tt.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
	if got := mustSeq(t, "000").String(); got != "0" {
		t.Errorf(`"000".String() = %q, want "0"`, got)
	}
	if got := mustSeq(t, "0042").String(); got != "42" {
		t.Errorf(`"0042".String() = %q, want "42"`, got)
	}
}

func TestParseSeqNumErrors(t *testing.T) {
	tests := map[string]string{
		"":    `sequence number "" is empty`,
		"12x": `sequence number "12x" is not a decimal integer`,
		"-1":  `sequence number "-1" is not a decimal integer`,
		"+1":  `sequence number "+1" is not a decimal integer`,
		"1.0": `sequence number "1.0" is not a decimal integer`,
		"1e3": `sequence number "1e3" is not a decimal integer`,
		" 1":  `sequence number " 1" is not a decimal integer`,
		"١":   `sequence number "١" is not a decimal integer`, // Arabic-Indic one
	}
	for in, want := range tests {
		_, err := ParseSeqNum(in)
		if err == nil || err.Error() != want {
			t.Errorf("ParseSeqNum(%q) error = %v, want %q", in, err, want)
		}
	}
	long := strings.Repeat("9", 200) + "x"
	_, err := ParseSeqNum(long)
	if err == nil || len(err.Error()) > 120 {
		t.Errorf("ParseSeqNum(long) error = %q, want a short message", err)
	}
}

func TestKeyCompare(t *testing.T) {
	k := func(at, seq string) Key {
		key, err := ParseKey(at, seq)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	// Time first, then sequence number.
	if k("1", "99").Compare(k("2", "1")) != -1 {
		t.Error("an earlier time must win over a smaller sequence number")
	}
	if k("2023-11-14T22:13:20Z", "10").Compare(k("1700000000", "9")) != 1 {
		t.Error("equal times must be ordered by numeric sequence number")
	}
	if k("1700000000", "0010").Compare(k("1.7e9", "10")) != 0 {
		t.Error("equal times and equal sequence numbers must compare equal")
	}
	if _, err := ParseKey("1", "x"); err == nil {
		t.Error("ParseKey accepted a bad sequence number")
	}
	if _, err := ParseKey("x", "1"); err == nil {
		t.Error("ParseKey accepted a bad time")
	}
}

func TestItemBeforeBreaksTiesByClock(t *testing.T) {
	key := Key{CreatedAt: mustTS(t, "5"), Seq: mustSeq(t, "7")}
	a := Item[string]{Key: key, Clock: 1}
	b := Item[string]{Key: key, Clock: 2}
	if !a.Before(b) || b.Before(a) || a.Before(a) {
		t.Error("equal keys must be ordered by clock, strictly")
	}
}

// digitsGen draws a decimal integer with up to n digits, leading zeros allowed.
func digitsGen(n int) *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom([]rune("0123456789")), 1, n, -1)
}

func TestSeqNumMatchesBigInt(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := digitsGen(45).Draw(t, "a"), digitsGen(45).Draw(t, "b")
		x, _ := new(big.Int).SetString(a, 10)
		y, _ := new(big.Int).SetString(b, 10)
		if got, want := mustSeq(t, a).Compare(mustSeq(t, b)), x.Cmp(y); got != want {
			t.Fatalf("Compare(%s, %s) = %d, big.Int says %d", a, b, got, want)
		}
		if got := mustSeq(t, a).String(); got != x.String() {
			t.Fatalf("String(%s) = %s, want %s", a, got, x)
		}
	})
}

// floorNanos returns floor(r × 1e9) split into seconds and nanoseconds.
func floorNanos(r *big.Rat) (sec, nsec *big.Int) {
	scaled := new(big.Rat).Mul(r, big.NewRat(1e9, 1))
	q, _ := new(big.Int).DivMod(scaled.Num(), scaled.Denom(), new(big.Int)) // Euclidean: floor for positive denominators
	sec, nsec = new(big.Int).DivMod(q, big.NewInt(1e9), new(big.Int))
	return sec, nsec
}

func TestEpochMatchesBigRat(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := ""
		if rapid.Bool().Draw(t, "neg") {
			s = "-"
		}
		s += digitsGen(21).Draw(t, "int")
		if rapid.Bool().Draw(t, "hasFrac") {
			s += "." + digitsGen(15).Draw(t, "frac")
		}
		if rapid.Bool().Draw(t, "hasExp") {
			s += "e" + rapid.SampledFrom([]string{"", "+", "-"}).Draw(t, "expSign") +
				strconv.Itoa(rapid.IntRange(0, 30).Draw(t, "exp"))
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read %q", s)
		}
		sec, nsec := floorNanos(r)
		got, err := ParseTimestamp(s)
		if !sec.IsInt64() {
			if err == nil {
				t.Fatalf("ParseTimestamp(%q) = %v, want out of range", s, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("ParseTimestamp(%q): %v", s, err)
		}
		gs, gn := got.Unix()
		if gs != sec.Int64() || int64(gn) != nsec.Int64() {
			t.Fatalf("ParseTimestamp(%q) = %d.%09d, want %s.%09d", s, gs, gn, sec, nsec.Int64())
		}
	})
}

func TestRFC3339MatchesEpoch(t *testing.T) {
	minSec := time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC).Unix()
	maxSec := time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC).Unix()
	rapid.Check(t, func(t *rapid.T) {
		sec := rapid.Int64Range(minSec, maxSec).Draw(t, "sec")
		nsec := rapid.Int64Range(0, 1e9-1).Draw(t, "nsec")
		offset := rapid.IntRange(-23*60-59, 23*60+59).Draw(t, "offsetMinutes")
		when := time.Unix(sec, nsec).In(time.FixedZone("", offset*60))
		rfc := when.Format(time.RFC3339Nano)
		epoch := Timestamp{sec: sec, nsec: int32(nsec)}.String()
		a, b := mustTS(t, rfc), mustTS(t, epoch)
		if a.Compare(b) != 0 {
			t.Fatalf("%s = %v but %s = %v", rfc, a, epoch, b)
		}
		if !a.Time().Equal(when) {
			t.Fatalf("Time() = %v, want %v", a.Time(), when)
		}
		// One nanosecond later is later in either notation.
		later := when.Add(time.Nanosecond).Format(time.RFC3339Nano)
		if mustTS(t, later).Compare(b) != 1 {
			t.Fatalf("%s does not compare after %s", later, epoch)
		}
	})
}
