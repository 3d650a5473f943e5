package ordering

import "strings"

// A SeqNum is a record's sequence number: a non-negative decimal integer of
// any length (DynamoDB's run to 40 digits, beyond uint64). It is held as its
// canonical digits, without leading zeros, so that comparison is by length
// and then byte by byte, which is numeric order. The zero SeqNum is 0.
type SeqNum struct {
	digits string // canonical: no leading zero; "" is 0
}

// ParseSeqNum reads a sequence number: one or more ASCII digits, leading
// zeros allowed ("007" is 7). Empty text, a sign, a fraction, an exponent or
// any other character is an error (a *KeyError).
func ParseSeqNum(s string) (SeqNum, error) {
	n, reason := parseSeqNum(s)
	if reason != "" {
		return SeqNum{}, &KeyError{Field: "sequence number", Text: quoted(s), Reason: reason}
	}
	return n, nil
}

func parseSeqNum(s string) (SeqNum, string) {
	if s == "" {
		return SeqNum{}, "is empty"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return SeqNum{}, "is not a decimal integer"
		}
	}
	trimmed := strings.TrimLeft(s, "0")
	if len(trimmed) < len(s) {
		trimmed = strings.Clone(trimmed) // do not pin a long run of zeros
	}
	return SeqNum{digits: trimmed}, ""
}

// Compare returns -1, 0 or +1 as n is numerically less than, equal to or
// greater than m.
func (n SeqNum) Compare(m SeqNum) int {
	switch {
	case len(n.digits) < len(m.digits):
		return -1
	case len(n.digits) > len(m.digits):
		return 1
	}
	return strings.Compare(n.digits, m.digits)
}

// String returns the canonical decimal digits, "0" for zero.
func (n SeqNum) String() string {
	if n.digits == "" {
		return "0"
	}
	return n.digits
}
