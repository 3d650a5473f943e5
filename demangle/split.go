package demangle

import "github.com/cdclog/cdclog/cdc"

// Splitting a step's progress statement. One step of the frontier can
// release any number of times (seen: 700k at once, an 18 MB line), and
// cdclog must be able to read its own output, so a statement whose
// encoding would exceed cdc.MaxMessageSize is cut into consecutive ones,
// [a, b) [b, c) ..., each followed by nothing and preceded by its own
// times' updates: the protocol allows re-batched progress. The cut depends
// only on the counts released, so the output stays the same from run to
// run and between the in-memory and the durable receiver.
//
// The size is that of the JSON encoding, which is never smaller than the
// msgpack one (each part of a count, of the header and of a number takes
// at least as many bytes in JSON), so the limit holds in both formats.

// Worst-case JSON sizes: a count with 20-digit time and count, and a
// statement's fixed part with 20-digit bounds.
const (
	maxCountJSON = len(`{"time":,"count":},`) + 2*20
	headerJSON   = len(`{"progress":{"lower":,"upper":,"counts":[]}}`)
)

// stepSplit decides where a step's statement is cut. The zero-cost check
// comes first: until the counts could, at their largest, exceed the
// limit, it does nothing; then it keeps the exact size of the counts.
type stepSplit struct {
	limit int
	// lower is where the current statement starts.
	lower uint64
	// bytes is the JSON size of the current statement's counts, commas
	// included, once exact is set.
	bytes int
	exact bool
}

// full reports whether adding c to the current statement, whose counts so
// far are counts, would take its encoding past the limit. A statement
// always takes at least one count.
func (s *stepSplit) full(counts []cdc.Count, c cdc.Count) bool {
	if len(counts) == 0 || headerJSON+40+(len(counts)+1)*maxCountJSON <= s.limit {
		return false
	}
	if !s.exact {
		s.bytes, s.exact = 0, true
		for _, k := range counts {
			s.bytes += countJSON(k)
		}
	}
	// The upper bound is not known until the step ends: count it at its
	// largest, 20 digits.
	return headerJSON+digits(s.lower)+20+s.bytes+countJSON(c) > s.limit
}

// added notes that c joined the current statement.
func (s *stepSplit) added(c cdc.Count) {
	if s.exact {
		s.bytes += countJSON(c)
	}
}

// restart starts a new statement at lower.
func (s *stepSplit) restart(lower uint64) {
	s.lower, s.bytes, s.exact = lower, 0, false
}

// countJSON is the size of c in a statement's JSON counts, with its comma.
func countJSON(c cdc.Count) int {
	return len(`{"time":,"count":},`) + digits(c.Time) + digits(c.Count)
}

// digits returns the number of decimal digits of v.
func digits(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// messageLimit is the size no emitted message may exceed.
func (r *Receiver) messageLimit() int {
	if r.maxMessage > 0 {
		return r.maxMessage
	}
	return cdc.MaxMessageSize
}
