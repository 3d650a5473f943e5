package ordering

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// A Timestamp is a record's created_at: an instant with nanosecond
// resolution, held exactly as whole seconds since the Unix epoch plus a
// non-negative nanosecond remainder. The zero Timestamp is the epoch.
// Timestamps compare exactly; no float64 is involved anywhere.
type Timestamp struct {
	sec  int64
	nsec int32 // in [0, 1e9)
}

// TimestampOf returns the Timestamp of t.
func TimestampOf(t time.Time) Timestamp {
	return Timestamp{sec: t.Unix(), nsec: int32(t.Nanosecond())}
}

// Unix returns the whole seconds since the epoch (rounded toward the past)
// and the nanoseconds past them, in [0, 1e9).
func (t Timestamp) Unix() (sec int64, nsec int32) { return t.sec, t.nsec }

// Time returns t as a time.Time in UTC.
func (t Timestamp) Time() time.Time { return time.Unix(t.sec, int64(t.nsec)).UTC() }

// Compare returns -1, 0 or +1 as t is before, equal to or after u.
func (t Timestamp) Compare(u Timestamp) int {
	switch {
	case t.sec < u.sec:
		return -1
	case t.sec > u.sec:
		return 1
	case t.nsec < u.nsec:
		return -1
	case t.nsec > u.nsec:
		return 1
	}
	return 0
}

// String renders t as decimal epoch seconds with the fraction it needs,
// e.g. "1700000000" or "1700000000.25"; ParseTimestamp reads it back.
func (t Timestamp) String() string {
	sec, nsec := t.sec, int64(t.nsec)
	neg := sec < 0
	if neg && nsec > 0 { // -1.25 is held as sec -2, nsec 750000000
		sec, nsec = sec+1, 1e9-nsec
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(strconv.FormatUint(absInt64(sec), 10))
	if nsec > 0 {
		frac := strconv.FormatInt(nsec+1e9, 10)[1:] // 9 digits with leading zeros
		b.WriteByte('.')
		b.WriteString(strings.TrimRight(frac, "0"))
	}
	return b.String()
}

func absInt64(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// ParseTimestamp reads a created_at value written either as epoch seconds
// or as an RFC 3339 date-time.
//
// Epoch seconds are a decimal number in JSON's number syntax, leading zeros
// allowed: "1700000000", "1700000000.25", "-1.5", "1.7e9". It is read from
// its digits, never through a float, so equal instants compare equal however
// they are written. An RFC 3339 date-time is read by its grammar
// ("2023-11-14T22:13:20.25Z", "2023-11-15T00:13:20+02:00"): fixed-width
// fields in range, the day valid for its month, any number of fraction
// digits after a '.', Z or an offset of at most 23:59, T and Z in either
// case; time.Parse, which also takes a one-digit hour or an offset of
// +24:00 and refuses a lower-case t or z, is not used.
//
// Precision beyond nanoseconds is truncated toward the past (the floor), as
// time.Parse does for RFC 3339: instants less than a nanosecond apart compare
// equal and are then ordered by sequence number. The range is that of
// int64 seconds. Errors are *KeyError.
func ParseTimestamp(s string) (Timestamp, error) {
	if s == "" {
		return Timestamp{}, &KeyError{Field: "created_at", Text: `""`, Reason: "is empty"}
	}
	if looksNumeric(s) {
		ts, reason := parseEpoch(s)
		if reason != "" {
			return Timestamp{}, &KeyError{Field: "created_at", Text: quoted(s), Reason: reason}
		}
		return ts, nil
	}
	// time.Parse is looser than RFC 3339 (a one-digit hour, a comma
	// before the fraction, an offset of +24:00 or +00:60): only the
	// grammar of RFC 3339 is read, with fastRFC3339.
	if ts, ok := fastRFC3339([]byte(s)); ok {
		return ts, nil
	}
	return Timestamp{}, &KeyError{Field: "created_at", Text: quoted(s),
		Reason: "is neither epoch seconds nor an RFC 3339 date-time"}
}

// looksNumeric tells an epoch number from a date-time: an RFC 3339 string
// has a '-' after its four-digit year, a number has none after its digits
// unless in an exponent.
func looksNumeric[T string | []byte](s T) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '.' || c == 'e' || c == 'E':
			return true
		default:
			return false
		}
	}
	return true
}

// decimal is a number split into its parts: sign, significant digits
// (no leading or trailing zeros) and the position of the decimal point
// relative to the first digit (value = 0.digits × 10^point).
type decimal struct {
	neg    bool
	digits string
	point  int
}

// maxExp bounds the exponent we track: anything beyond makes the value
// overflow int64 seconds or fall below a nanosecond, whatever the digits
// before it. It must exceed the length of any number read (a line is at
// most 16 MiB): with 1<<20, "0.<2^20 zeros>1e1048590" was read as 0.1,
// the zeros outweighing the saturated exponent.
const maxExp = 1 << 30

// parseDecimal reads JSON's number syntax, allowing leading zeros. It
// returns a reason on failure.
func parseDecimal(s string) (decimal, string) {
	var d decimal
	const bad = "is not a decimal number"
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	intPart, rest := spanDigits(s)
	if intPart == "" {
		return d, bad
	}
	var frac string
	if strings.HasPrefix(rest, ".") {
		if frac, rest = spanDigits(rest[1:]); frac == "" {
			return d, bad
		}
	}
	exp := 0
	if rest != "" {
		var ok bool
		if exp, ok = parseExponent(rest); !ok {
			return d, bad
		}
	}
	all := intPart + frac
	lead := len(all) - len(strings.TrimLeft(all, "0"))
	d.digits = strings.TrimRight(all[lead:], "0")
	d.point = len(intPart) - lead + exp
	return d, ""
}

// spanDigits splits s after its leading run of ASCII digits.
func spanDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// parseExponent reads "e12", "E-3", "e+07", saturating at ±maxExp.
func parseExponent(s string) (int, bool) {
	if s[0] != 'e' && s[0] != 'E' {
		return 0, false
	}
	s = s[1:]
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	digits, rest := spanDigits(s)
	if digits == "" || rest != "" {
		return 0, false
	}
	var exp int64
	for i := 0; i < len(digits) && exp < maxExp; i++ {
		exp = exp*10 + int64(digits[i]-'0')
	}
	exp = min(exp, maxExp)
	if neg {
		exp = -exp
	}
	return int(exp), true
}

// parseEpoch converts decimal epoch seconds to a Timestamp, flooring to the
// nanosecond. It returns a reason on failure.
func parseEpoch(s string) (Timestamp, string) {
	d, reason := parseDecimal(s)
	if reason != "" {
		return Timestamp{}, reason
	}
	if d.digits == "" {
		return Timestamp{}, ""
	}
	const outOfRange = "is out of range for epoch seconds"
	if d.point > 19 {
		return Timestamp{}, outOfRange
	}
	digit := func(i int) uint64 {
		if i < 0 || i >= len(d.digits) {
			return 0
		}
		return uint64(d.digits[i] - '0')
	}
	const limit = math.MaxInt64 + 1 // the magnitude of math.MinInt64
	var sec uint64
	for i := 0; i < d.point; i++ {
		if sec > (limit-digit(i))/10 {
			return Timestamp{}, outOfRange
		}
		sec = sec*10 + digit(i)
	}
	var nsec uint64
	for i := d.point; i < d.point+9; i++ {
		nsec = nsec*10 + digit(i)
	}
	if !d.neg {
		if sec > math.MaxInt64 {
			return Timestamp{}, outOfRange
		}
		return Timestamp{sec: int64(sec), nsec: int32(nsec)}, ""
	}
	if len(d.digits) > d.point+9 { // dropped digits: the floor is one ns further back
		nsec++
	}
	if nsec == 1e9 {
		sec, nsec = sec+1, 0
	}
	switch {
	case nsec == 0 && sec <= math.MaxInt64:
		return Timestamp{sec: -int64(sec)}, ""
	case nsec == 0 && sec == math.MaxInt64+1:
		return Timestamp{sec: math.MinInt64}, ""
	case sec <= math.MaxInt64:
		return Timestamp{sec: -int64(sec) - 1, nsec: int32(1e9 - nsec)}, ""
	}
	return Timestamp{}, outOfRange
}
