package ordering

import (
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"
)

// Generators shared by the property tests. Keys are drawn from a narrow
// range so that equal times and equal sequence numbers are common, and are
// written in every notation the parser accepts.

const baseEpoch = 1700000000

// createdAtGen draws a created_at text: one of a few instants, as integer
// or fractional epoch seconds or as RFC 3339 in one of two offsets.
func createdAtGen() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		sec := int64(baseEpoch + rapid.IntRange(0, 3).Draw(t, "sec"))
		nsec := int64(rapid.SampledFrom([]int{0, 250_000_000, 500_000_000}).Draw(t, "nsec"))
		when := time.Unix(sec, nsec)
		switch rapid.IntRange(0, 3).Draw(t, "form") {
		case 0:
			return Timestamp{sec: sec, nsec: int32(nsec)}.String()
		case 1:
			return fmt.Sprintf("%d.%09d", sec, nsec)
		case 2:
			return when.UTC().Format(time.RFC3339Nano)
		default:
			return when.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano)
		}
	})
}

// seqGen draws a sequence number text: small, or beyond 2^64 (DynamoDB's
// 21 to 40 digits), sometimes with leading zeros.
func seqGen() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		var digits string
		if rapid.Bool().Draw(t, "big") {
			digits = "1" + strings.Repeat("0", rapid.IntRange(19, 39).Draw(t, "zeros"))
			digits = digits[:len(digits)-1] + fmt.Sprint(rapid.IntRange(0, 2).Draw(t, "last"))
		} else {
			digits = fmt.Sprint(rapid.IntRange(0, 3).Draw(t, "small"))
		}
		return strings.Repeat("0", rapid.IntRange(0, 2).Draw(t, "lead")) + digits
	})
}

// keyGen draws a Key by parsing generated text.
func keyGen() *rapid.Generator[Key] {
	return rapid.Custom(func(t *rapid.T) Key {
		at, seq := createdAtGen().Draw(t, "created_at"), seqGen().Draw(t, "seq")
		k, err := ParseKey(at, seq)
		if err != nil {
			t.Fatalf("ParseKey(%q, %q): %v", at, seq, err)
		}
		return k
	})
}
