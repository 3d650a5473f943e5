package ordering

import (
	"encoding/binary"
	"math/bits"
)

// Shapes: validating a record by its likeness to the one before.
//
// A shard's records are nearly always alike: the same members in the same
// order, the same nesting, only the values differing. A shape is such a
// record's skeleton: its text with every scalar value (string, number,
// true, false, null) cut out. A record matches a shape when it is the
// shape's literal text with a valid JSON scalar in every cut, and then it
// is valid JSON: the shape came from a valid record, and one scalar value
// can stand in for another anywhere in JSON's grammar. Its key fields are
// in the same cuts as those of the record the shape came from. Matching
// costs a comparison of the literal runs (memequal) and a scan of each
// scalar, instead of a walk over every byte of the structure
// (BenchmarkRecordKey compares the two).
//
// A record that matches no shape takes scanRecord's full walk; if valid,
// it becomes a shape itself, unless the shapes learnt lately went unused
// (then learning backs off, so that a shard of ever-different records
// costs little more than the full walk alone).

// maxShapeSlots is the most scalar values a shape may have: a record with
// more gains little from one.
const maxShapeSlots = 64

// shapesKept is how many shapes a keyScanner keeps, most recently matched
// first.
const shapesKept = 4

// A shape is the skeleton of a valid record: literal text and cuts, in
// turn, then a last literal.
type shape struct {
	parts []shapePart
	tail  []byte
	// cut holds, after a match, where the created_at and sequence number
	// values were (by role), and the last other value (cut[roleNone]).
	cut  [3][2]int
	hits int
}

// What a cut of a shape holds: created_at and the sequence number, as
// keyValues picks them, or another value.
const (
	roleNone = iota
	roleAt
	roleSeq
)

// A shapePart is the literal text before a cut, with up to four of its
// words for comparing it in line: calling memequal for each literal was a
// fifth of match's time, the literals being short (a member name and its
// punctuation).
type shapePart struct {
	lit  []byte
	w    [4]uint64 // by len(lit): < 8, its bytes (mask: which); 8 to 16, words at 0 and n-8; to 32, at 0, 8, n-16, n-8
	mask uint64
	role uint8 // of the cut after the literal
}

// newShapePart prepares the literal lit.
func newShapePart(lit []byte) shapePart {
	p := shapePart{lit: lit}
	n := len(lit)
	word := func(i int) uint64 { return binary.LittleEndian.Uint64(lit[i:]) }
	switch {
	case n < 8:
		var pad [8]byte
		copy(pad[:], lit)
		p.w[0], p.mask = binary.LittleEndian.Uint64(pad[:]), 1<<(8*n)-1
	case n <= 16:
		p.w[0], p.w[1] = word(0), word(n-8)
	case n <= 32:
		p.w = [4]uint64{word(0), word(8), word(n - 16), word(n - 8)}
	}
	return p
}

// at reports whether b holds the literal at i.
func (p *shapePart) at(b []byte, i int) bool {
	n := len(p.lit)
	if len(b)-i < n {
		return false
	}
	word := func(j int) uint64 { return binary.LittleEndian.Uint64(b[j:]) }
	switch {
	case n < 8:
		if len(b)-i < 8 {
			return string(b[i:i+n]) == string(p.lit)
		}
		return (word(i)^p.w[0])&p.mask == 0
	case n <= 16:
		return (word(i)^p.w[0])|(word(i+n-8)^p.w[1]) == 0
	case n <= 32:
		return (word(i)^p.w[0])|(word(i+8)^p.w[1])|(word(i+n-16)^p.w[2])|(word(i+n-8)^p.w[3]) == 0
	}
	return string(b[i:i+n]) == string(p.lit)
}

// learnShape returns the shape of rec, a record scanRecord accepted whose
// created_at and sequence number (as keyValues picks them) are at and seq,
// two slices of rec; nil when either is an object or array, or rec has
// too many values.
func learnShape(rec, at, seq []byte) *shape {
	text := append([]byte(nil), rec...) // the parts' literals point into it
	s := &shape{}
	prev, roles := 0, 0
	for i := 0; i < len(rec); {
		c := rec[i]
		var end int
		switch {
		case c == '"':
			end = skipString(rec, i)
			if j := skipSpace(rec, end); j < len(rec) && rec[j] == ':' {
				i = end // a member name: literal text
				continue
			}
		case c == '-' || c >= '0' && c <= '9':
			end, _ = scanNumber(rec, i)
		case c == 't' || c == 'n':
			end = i + 4
		case c == 'f':
			end = i + 5
		default: // structure or white space
			i++
			continue
		}
		if len(s.parts) == maxShapeSlots {
			return nil
		}
		p := newShapePart(text[prev:i])
		switch {
		case sameSlice(rec[i:end], at):
			p.role = roleAt
			roles++
		case sameSlice(rec[i:end], seq):
			p.role = roleSeq
			roles++
		}
		s.parts = append(s.parts, p)
		prev, i = end, end
	}
	s.tail = text[prev:]
	if roles != 2 {
		return nil // a key field is an object or array
	}
	return s
}

// sameSlice reports whether a and b are the same bytes of one array.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// match reports whether rec has shape s, and then returns its created_at
// and sequence number values.
func (s *shape) match(rec []byte) (at, seq []byte, ok bool) {
	end, ok := s.matchAt(rec, 0)
	if !ok || end != len(rec) {
		return nil, nil, false
	}
	at, seq = s.values(rec)
	return at, seq, true
}

// values returns the created_at and sequence number values of b, in which
// matchAt has just matched s.
func (s *shape) values(b []byte) (at, seq []byte) {
	return b[s.cut[roleAt][0]:s.cut[roleAt][1]], b[s.cut[roleSeq][0]:s.cut[roleSeq][1]]
}

// matchAt reports whether b holds a record of shape s at pos, and then
// returns where it ends; s.values gives its key values. The literal's
// comparison and the common string's scan are written out here rather
// than called (the calls were a third of its time), and it keeps few
// values live across the loop, so that they stay in registers.
func (s *shape) matchAt(rec []byte, pos int) (end int, ok bool) {
	for k := range s.parts {
		p := &s.parts[k]
		n := len(p.lit)
		if len(rec)-pos < n+8 || n > 32 {
			if !p.at(rec, pos) {
				return 0, false
			}
		} else {
			var diff uint64
			switch w := rec[pos:]; {
			case n < 8:
				diff = (binary.LittleEndian.Uint64(w) ^ p.w[0]) & p.mask
			case n <= 16:
				// (^ and | bind alike in Go: the parentheses matter)
				diff = (binary.LittleEndian.Uint64(w) ^ p.w[0]) | (binary.LittleEndian.Uint64(w[n-8:]) ^ p.w[1])
			default:
				diff = (binary.LittleEndian.Uint64(w) ^ p.w[0]) | (binary.LittleEndian.Uint64(w[8:]) ^ p.w[1]) |
					(binary.LittleEndian.Uint64(w[n-16:]) ^ p.w[2]) | (binary.LittleEndian.Uint64(w[n-8:]) ^ p.w[3])
			}
			if diff != 0 {
				return 0, false
			}
		}
		pos += n
		start := pos
		if pos < len(rec) && rec[pos] == '"' {
			// a string: to the first quote, backslash or control
			// character; only a quote ends it here
			j := pos + 1
			for {
				if j+8 > len(rec) {
					for j < len(rec) && rec[j] != '"' && rec[j] != '\\' && rec[j] >= 0x20 {
						j++
					}
					break
				}
				if m := stringStops(binary.LittleEndian.Uint64(rec[j:])); m != 0 {
					j += bits.TrailingZeros64(m) >> 3
					break
				}
				j += 8
			}
			if j < len(rec) && rec[j] == '"' {
				pos = j + 1
			} else if pos, ok = scanScalar(rec, pos); !ok {
				return 0, false
			}
		} else if pos, ok = scanScalar(rec, pos); !ok {
			return 0, false
		}
		s.cut[p.role] = [2]int{start, pos}
	}
	end = pos + len(s.tail)
	return end, end <= len(rec) && string(rec[pos:end]) == string(s.tail)
}

// scanScalar returns the index just past the string, number, true, false
// or null starting at i.
func scanScalar(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	}
	return i, false
}

// A keyScanner finds records' keys, by shape when it can. The zero
// keyScanner is ready; one is not safe for concurrent use (each shard
// reader has its own).
type keyScanner struct {
	// lastAt and lastTS are the last created_at read and its value:
	// consecutive records often share it, and comparing is cheaper than
	// parsing.
	lastAt  []byte
	lastTS  Timestamp
	shapes  [shapesKept]*shape
	misses  int // records in a row that matched no shape
	backoff int // misses to wait before learning again
}

// maxBackoff bounds how many records may go by between two learnings.
const maxBackoff = 1024

// values returns rec's created_at and sequence number values as
// scanRecord and keyValues find them; ok is false when scanRecord or
// keyValues fails.
func (ks *keyScanner) values(rec []byte) (at, seq []byte, ok bool) {
	for i, s := range ks.shapes {
		if s == nil {
			break
		}
		if at, seq, ok = s.match(rec); ok {
			s.hits++
			if i > 0 { // most recently matched first
				copy(ks.shapes[1:i+1], ks.shapes[:i])
				ks.shapes[0] = s
			}
			ks.misses, ks.backoff = 0, 0
			return at, seq, true
		}
	}
	f, ok := scanRecord(rec)
	if !ok {
		return nil, nil, false
	}
	if at, seq, ok = keyValues(&f); !ok {
		return nil, nil, false
	}
	if ks.misses++; ks.misses > ks.backoff {
		ks.learn(rec, at, seq)
	}
	return at, seq, true
}

// learn makes rec's shape the first, dropping the last; if that one never
// matched, learning backs off.
func (ks *keyScanner) learn(rec, at, seq []byte) {
	s := learnShape(rec, at, seq)
	if s == nil {
		return
	}
	if last := ks.shapes[shapesKept-1]; last != nil && last.hits == 0 {
		ks.backoff = min(maxBackoff, 2*ks.backoff+1)
	}
	ks.misses = 0
	copy(ks.shapes[1:], ks.shapes[:shapesKept-1])
	ks.shapes[0] = s
}

// key sets *k to rec's key as fastRecordKey finds it; false when
// fastRecordKey would decline.
func (ks *keyScanner) key(rec []byte, k *mergeKey) bool {
	at, seq, ok := ks.values(rec)
	return ok && ks.parse(at, seq, k)
}

// lineAt reports whether b holds, at i, a record of the first shape that
// ends its line ("\n" or "\r\n"), and then sets *k to its key and returns
// where the record ends and where the next line starts: finding the line
// and checking the record in one pass, not two.
func (ks *keyScanner) lineAt(b []byte, i int, k *mergeKey) (end, next int, ok bool) {
	s := ks.shapes[0]
	if s == nil {
		return 0, 0, false
	}
	end, ok = s.matchAt(b, i)
	switch {
	case !ok || end >= len(b):
		return 0, 0, false
	case b[end] == '\n':
		next = end + 1
	case b[end] == '\r' && end+1 < len(b) && b[end+1] == '\n':
		next = end + 2
	default:
		return 0, 0, false
	}
	if at, seq := s.values(b); !ks.parse(at, seq, k) {
		return 0, 0, false
	}
	s.hits++
	ks.misses, ks.backoff = 0, 0
	return end, next, true
}

// parse sets *k to the key of the created_at and sequence number values
// at and seq, when fastTimestamp and fastSeqNum read them.
func (ks *keyScanner) parse(at, seq []byte, k *mergeKey) bool {
	var ok bool
	ts := ks.lastTS
	if string(at) != string(ks.lastAt) {
		if ts, ok = fastTimestamp(at); !ok {
			return false
		}
		ks.lastAt, ks.lastTS = append(ks.lastAt[:0], at...), ts
	}
	digits, ok := fastSeqNum(seq)
	if !ok {
		return false
	}
	k.set(ts, digits)
	return true
}
