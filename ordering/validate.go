package ordering

import (
	"encoding/binary"
	"math/bits"
)

// A purpose-built JSON validator for the merge's hot path. json.Valid was
// 47% of cdclog merge's CPU (a byte-at-a-time state machine calling a
// function per byte); this one walks the record once, in one loop with an
// explicit stack, finds the end of each string eight bytes at a time, and
// on the way keeps the raw values of the key fields, so that finding the
// key needs no second pass. BenchmarkRecordKey has the numbers.
//
// It is exact in one direction only, and that is all it needs to be: what
// it accepts, json.Valid accepts (RFC 8259's grammar; in strings any byte
// from 0x20 up, invalid UTF-8 included, as json.Valid does), and the
// fields it reports are the ones findMembers finds. What it refuses
// (invalid JSON, a value that is not an object, nesting deeper than
// maxScanDepth) goes to the slow path, json.Valid and findMembers, which
// says exactly why. FuzzFastRecordKey checks this against encoding/json.

// maxScanDepth is the deepest nesting scanRecord follows; deeper records
// (json.Valid allows 10000) take the slow path.
const maxScanDepth = 64

// keyFields are the raw values of the members RecordKey reads, as
// scanRecord found them: of the last top-level meta and dynamodb members,
// their last created_at and sequence_number (meta) and
// ApproximateCreationDateTime and SequenceNumber (dynamodb). A value is nil
// when absent.
type keyFields struct {
	meta, dyn       members
	hasMeta, hasDyn bool // the top-level member is present
	metaObj, dynObj bool // ... and is an object
}

// Which member a name is, at depth 1 (meta, dynamodb) or depth 2 inside one
// of those (the two key fields).
const (
	memberOther = iota
	memberMeta
	memberDyn
)

// scanRecord validates rec as one JSON object, white space around it
// allowed, and returns its key fields. ok is false when rec is not valid
// JSON, not an object, or nested deeper than maxScanDepth.
func scanRecord(rec []byte) (f keyFields, ok bool) {
	var (
		arrays uint64 // bit d set: the container at depth d+1 is an array
		depth  int
		top    int // memberMeta or memberDyn: the top-level member being read
		field  int // 0 or 1: the key field being read inside it, or -1
		start2 int // start of the value of the current depth-2 member
	)
	b := rec
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return f, false
	}
	depth, i = 1, i+1
	field = -1
object: // just past '{'
	i = skipSpace(b, i)
	if i < len(b) && b[i] == '}' {
		i++
		goto closed
	}
member: // at a member's name
	if i == len(b) || b[i] != '"' {
		return f, false
	}
	{
		nameStart := i
		var escaped bool
		if i, escaped, ok = scanString(b, i); !ok {
			return f, false
		}
		switch depth {
		case 1:
			top, field = memberOther, -1
			name := b[nameStart:i]
			switch {
			case isName(name, escaped, fieldMeta):
				top = memberMeta
			case isName(name, escaped, fieldDynamo):
				top = memberDyn
			}
		case 2:
			field = -1
			if top == memberMeta {
				field = whichField(b[nameStart:i], escaped, fieldCreatedAt, fieldSeq)
			} else if top == memberDyn {
				field = whichField(b[nameStart:i], escaped, fieldDynamoTime, fieldDynamoSeq)
			}
		}
	}
	if i = skipSpace(b, i); i == len(b) || b[i] != ':' {
		return f, false
	}
	i = skipSpace(b, i+1)
	switch depth {
	case 1:
		switch top {
		case memberMeta:
			f.meta, f.hasMeta, f.metaObj = members{}, true, i < len(b) && b[i] == '{'
		case memberDyn:
			f.dyn, f.hasDyn, f.dynObj = members{}, true, i < len(b) && b[i] == '{'
		}
	case 2:
		start2 = i
	}
value: // at a value
	if i == len(b) {
		return f, false
	}
	switch c := b[i]; {
	case c == '"':
		if i, _, ok = scanString(b, i); !ok {
			return f, false
		}
	case c == '{' || c == '[':
		if depth == maxScanDepth {
			return f, false
		}
		arrays &^= 1 << depth
		depth++
		i++
		if c == '{' {
			goto object
		}
		arrays |= 1 << (depth - 1)
		if i = skipSpace(b, i); i < len(b) && b[i] == ']' {
			i++
			goto closed
		}
		goto value
	case c == '-' || c >= '0' && c <= '9':
		if i, ok = scanNumber(b, i); !ok {
			return f, false
		}
	case c == 't':
		if i, ok = scanLiteral(b, i, "true"); !ok {
			return f, false
		}
	case c == 'f':
		if i, ok = scanLiteral(b, i, "false"); !ok {
			return f, false
		}
	case c == 'n':
		if i, ok = scanLiteral(b, i, "null"); !ok {
			return f, false
		}
	default:
		return f, false
	}
done: // just past a value of the container at depth
	if depth == 2 && field >= 0 {
		if top == memberMeta && f.metaObj {
			f.meta[field] = b[start2:i]
		} else if top == memberDyn && f.dynObj {
			f.dyn[field] = b[start2:i]
		}
	}
	if i = skipSpace(b, i); i == len(b) {
		return f, false
	}
	switch c := b[i]; {
	case c == ',':
		i = skipSpace(b, i+1)
		if arrays&(1<<(depth-1)) != 0 {
			goto value
		}
		goto member
	case c == '}' && arrays&(1<<(depth-1)) == 0, c == ']' && arrays&(1<<(depth-1)) != 0:
		i++
		goto closed
	}
	return f, false
closed: // just past the '}' or ']' that closed the container at depth
	depth--
	if depth == 0 {
		return f, skipSpace(b, i) == len(b)
	}
	goto done
}

// whichField returns 0 or 1 as the name token is a or b, or -1.
func whichField(tok []byte, escaped bool, a, b string) int {
	switch {
	case isName(tok, escaped, a):
		return 0
	case isName(tok, escaped, b):
		return 1
	}
	return -1
}

// isName reports whether the string token tok (quotes included, already
// validated) is name.
func isName(tok []byte, escaped bool, name string) bool {
	if !escaped {
		return len(tok) == len(name)+2 && string(tok[1:len(tok)-1]) == name
	}
	return nameIs(tok, name)
}

func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// scanNumber returns the index just past the number at i, in JSON's
// grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?. What follows is
// the caller's to check.
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		if i++; i == len(b) {
			return i, false
		}
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		start := i + 1
		if i = skipDigits(b, start); i == start {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		if i = skipDigits(b, start); i == start {
			return i, false
		}
	}
	return i, true
}

// skipDigits returns the index of the first byte from i on that is not
// an ASCII digit, eight bytes at a time while it can (created_at's ten
// digits were a loop of ten).
func skipDigits(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := nonDigits(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// nonDigits returns a word with the top bit set in the lane of the first
// byte of w (the first in the low lane) that is not an ASCII digit, and
// maybe in later lanes; zero when all eight are digits. A byte is a digit
// when it has the top bit clear, and it less '0' does too (it is not below
// '0'), and it plus 0x7f-'9' does too (it is not above '9'). A lane can
// only borrow or carry into a higher one from a lane that is itself set,
// so the lowest set lane is exact.
func nonDigits(w uint64) uint64 {
	return (w | (w - lanes*'0') | (w + lanes*(0x7f-'9'))) & tops
}

// SWAR constants: a byte repeated in every lane, and every lane's top bit.
const (
	lanes = 0x0101010101010101
	tops  = 0x8080808080808080
)

// stringStops returns, for the eight bytes of w (the first in the low
// lane), a word with the top bit set in the lane of the first byte that
// ends a string or needs a look ('"', '\\', or a control character below
// 0x20), and possibly in later lanes; zero when there is none. Each term
// is the classic "has a zero byte" test (on w xor the byte, or on w less
// 0x20 for a byte below 0x20): a borrow can only set a lane above one that
// is truly set, so the lowest set lane is exact.
func stringStops(w uint64) uint64 {
	q := w ^ (lanes * '"')
	s := w ^ (lanes * '\\')
	return ((q-lanes)&^q | (s-lanes)&^s | (w-lanes*0x20)&^w) & tops
}

// scanString returns the index just past the string token starting at i
// (b[i] is '"'), and whether it holds an escape.
func scanString(b []byte, i int) (end int, escaped bool, ok bool) {
	i++
	for {
		var c byte
		if i+8 <= len(b) {
			m := stringStops(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
			c = b[i]
		} else if i < len(b) {
			if c = b[i]; c != '"' && c != '\\' && c >= 0x20 {
				i++
				continue
			}
		} else {
			return i, escaped, false
		}
		switch {
		case c == '"':
			return i + 1, escaped, true
		case c == '\\':
			escaped = true
			if i+1 == len(b) {
				return i, escaped, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return i, escaped, false
				}
				i += 6
			default:
				return i, escaped, false
			}
		default: // a control character
			return i, escaped, false
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
