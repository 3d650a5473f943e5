package cdc

import (
	"math"
	"strconv"
)

// num is a number read from JSON or msgpack, reduced to what the message
// fields need: whether it is an exact integer, its sign and its magnitude.
type num struct {
	neg   bool   // below zero (or -0 written in JSON)
	exact bool   // the value is an integer
	big   bool   // an integer whose magnitude exceeds math.MaxUint64
	mag   uint64 // the magnitude of an exact, non-big value
	raw   []byte // the JSON text, for messages; nil for msgpack
	f     float64
	float bool // a msgpack float (f holds it)
}

// String returns the number as written, for error messages.
func (n num) String() string {
	switch {
	case n.raw != nil:
		return string(n.raw)
	case n.float:
		return strconv.FormatFloat(n.f, 'g', -1, 64)
	case n.neg:
		return "-" + strconv.FormatUint(n.mag, 10)
	}
	return strconv.FormatUint(n.mag, 10)
}

// jsonNum interprets raw, a number that matches the JSON grammar, exactly:
// 7, 7.0, 7.00 and 70e-1 are all the integer 7; 7.5 is not an integer.
func jsonNum(raw []byte) num {
	n := num{raw: raw}
	i := 0
	if raw[0] == '-' {
		n.neg = true
		i = 1
	}
	// Fast path: plain digits.
	j := i
	var v uint64
	for j < len(raw) && isDigit(raw[j]) {
		j++
	}
	if j == len(raw) && j-i <= 19 {
		for _, c := range raw[i:j] {
			v = v*10 + uint64(c-'0')
		}
		n.exact, n.mag = true, v
		return n
	}
	intPart := raw[i:j]
	var frac []byte
	if j < len(raw) && raw[j] == '.' {
		k := j + 1
		for k < len(raw) && isDigit(raw[k]) {
			k++
		}
		frac = raw[j+1 : k]
		j = k
	}
	exp := 0
	if j < len(raw) && (raw[j] == 'e' || raw[j] == 'E') {
		exp = parseExp(raw[j+1:])
	}
	return exactInteger(n, intPart, frac, exp)
}

// parseExp reads a JSON exponent, saturating far beyond any useful value.
func parseExp(b []byte) int {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	e := 0
	for _, c := range b {
		if e < 1e8 {
			e = e*10 + int(c-'0')
		}
	}
	if neg {
		return -e
	}
	return e
}

// exactInteger decides whether intPart.frac × 10^exp is an integer and, if
// so, its magnitude.
func exactInteger(n num, intPart, frac []byte, exp int) num {
	// Significant digits, without leading zeros.
	lead := 0
	digits := len(intPart) + len(frac)
	at := func(k int) byte {
		if k < len(intPart) {
			return intPart[k]
		}
		return frac[k-len(intPart)]
	}
	for lead < digits && at(lead) == '0' {
		lead++
	}
	trail := digits
	for trail > lead && at(trail-1) == '0' {
		trail--
	}
	if lead == trail {
		n.exact = true // zero
		return n
	}
	// The value is D × 10^e10 with D = digits[lead:trail], no trailing zero.
	e10 := exp - len(frac) + (digits - trail)
	if e10 < 0 {
		return n // a fraction remains
	}
	n.exact = true
	if trail-lead+e10 > 20 {
		n.big = true
		return n
	}
	var v uint64
	for k := lead; k < trail+e10; k++ {
		d := uint64(0)
		if k < trail {
			d = uint64(at(k) - '0')
		}
		if v > (math.MaxUint64-d)/10 {
			n.big = true
			return n
		}
		v = v*10 + d
	}
	n.mag = v
	return n
}

// floatNum interprets a msgpack float.
func floatNum(f float64) num {
	n := num{float: true, f: f, neg: math.Signbit(f)}
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return n
	}
	n.exact = true
	a := math.Abs(f)
	if a >= 1<<64 {
		n.big = true
		return n
	}
	n.mag = uint64(a)
	return n
}

// uintOK returns n as a uint64 when it is a non-negative integer that fits.
func (n num) uintOK() (uint64, bool) {
	return n.mag, n.exact && !n.big && (!n.neg || n.mag == 0)
}

// asUint checks that n is a non-negative integer that fits in 64 bits; what
// and field name the message part and field for the error.
func (n num) asUint(what, field string) (uint64, error) {
	switch {
	case !n.exact:
		return 0, errorf("%s%q is not an integer (%s)", what, field, n)
	case n.neg && (n.mag != 0 || n.big):
		return 0, errorf("%s%q is negative (%s)", what, field, n)
	case n.big:
		return 0, errorf("%s%q exceeds %d (%s)", what, field, uint64(math.MaxUint64), n)
	}
	return n.mag, nil
}

// asDiff checks that n is a non-zero integer that fits in an int64.
func (n num) asDiff(what string) (int64, error) {
	switch {
	case !n.exact:
		return 0, errorf("%s\"diff\" is not an integer (%s)", what, n)
	case n.mag == 0 && !n.big:
		return 0, errorf("%s\"diff\" is zero", what)
	case n.big || (n.neg && n.mag > 1<<63) || (!n.neg && n.mag > math.MaxInt64):
		return 0, errorf("%s\"diff\" is outside the int64 range (%s)", what, n)
	case n.neg:
		return -int64(n.mag-1) - 1, nil
	}
	return int64(n.mag), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
