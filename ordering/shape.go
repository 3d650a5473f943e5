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
// scalar, instead of a walk over every byte of the structure: the
// difference, on the 2-core development machine, between about 600 and
// 150 ns for a 200-byte record (BenchmarkRecordKey).
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

// A shape is the skeleton of a valid record.
type shape struct {
	text  []byte     // the record it came from (a copy)
	cuts  [][2]int32 // start and end of each scalar value in text
	field []uint8    // per cut: which key field it holds (fieldNone, or fieldMetaAt...)
	f     keyFields  // the record's key fields, less their values
	hits  int
}

// What a cut of a shape holds.
const (
	fieldNone uint8 = iota
	fieldMetaAt
	fieldMetaSeq
	fieldDynAt
	fieldDynSeq
)

// learnShape returns the shape of rec, a record scanRecord accepted with
// key fields f, or nil when its key fields are not all scalar values or it
// has too many values.
func learnShape(rec []byte, f keyFields) *shape {
	s := &shape{text: append([]byte(nil), rec...)}
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
		if len(s.cuts) == maxShapeSlots {
			return nil
		}
		s.cuts = append(s.cuts, [2]int32{int32(i), int32(end)})
		s.field = append(s.field, fieldOf(rec, i, end, f))
		i = end
	}
	s.f = f
	s.f.meta, s.f.dyn = members{}, members{}
	for _, v := range [...][]byte{f.meta[0], f.meta[1], f.dyn[0], f.dyn[1]} {
		if v != nil && !s.hasCut(rec, v) {
			return nil // a key field is an object or array
		}
	}
	return s
}

// fieldOf says which of f's values, if any, is rec[start:end].
func fieldOf(rec []byte, start, end int, f keyFields) uint8 {
	at := func(v []byte) bool { return len(v) == end-start && len(v) > 0 && &v[0] == &rec[start] }
	switch {
	case at(f.meta[0]):
		return fieldMetaAt
	case at(f.meta[1]):
		return fieldMetaSeq
	case at(f.dyn[0]):
		return fieldDynAt
	case at(f.dyn[1]):
		return fieldDynSeq
	}
	return fieldNone
}

// hasCut reports whether the value v, a slice of rec, is one of the cuts.
func (s *shape) hasCut(rec, v []byte) bool {
	for i, c := range s.cuts {
		if int(c[1]-c[0]) == len(v) && &rec[c[0]] == &v[0] {
			return s.field[i] != fieldNone
		}
	}
	return false
}

// match reports whether rec has shape s, and then sets *f to its key
// fields.
func (s *shape) match(rec []byte, f *keyFields) bool {
	*f = s.f
	pos, prev := 0, 0
	for k, c := range s.cuts {
		lit := s.text[prev:c[0]]
		if len(rec)-pos < len(lit) || string(rec[pos:pos+len(lit)]) != string(lit) {
			return false
		}
		pos += len(lit)
		start := pos
		var ok bool
		if pos, ok = scanCut(rec, pos); !ok {
			return false
		}
		if s.field[k] != fieldNone {
			f.set(s.field[k], rec[start:pos])
		}
		prev = int(c[1])
	}
	lit := s.text[prev:]
	return len(rec)-pos == len(lit) && string(rec[pos:]) == string(lit)
}

// scanCut is scanScalar with the common string (no escape) done in line:
// the call to scanString was a third of match's time.
func scanCut(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return scanScalar(b, i)
	}
	j := i + 1
	for ; j+8 <= len(b); j += 8 {
		if m := stringStops(binary.LittleEndian.Uint64(b[j:])); m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			if b[j] == '"' {
				return j + 1, true
			}
			return scanScalar(b, i)
		}
	}
	for ; j < len(b); j++ {
		if c := b[j]; c == '"' {
			return j + 1, true
		} else if c == '\\' || c < 0x20 {
			break
		}
	}
	return scanScalar(b, i)
}

// set sets the key field which to v.
func (f *keyFields) set(which uint8, v []byte) {
	switch which {
	case fieldMetaAt:
		f.meta[0] = v
	case fieldMetaSeq:
		f.meta[1] = v
	case fieldDynAt:
		f.dyn[0] = v
	case fieldDynSeq:
		f.dyn[1] = v
	}
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

// A keyScanner finds records' key fields, by shape when it can. The zero
// keyScanner is ready; one is not safe for concurrent use (each shard
// reader has its own).
type keyScanner struct {
	shapes  [shapesKept]*shape
	misses  int // records in a row that matched no shape
	backoff int // misses to wait before learning again
}

// maxBackoff bounds how many records may go by between two learnings.
const maxBackoff = 1024

// fields sets *f to the key fields of rec as scanRecord finds them, and
// reports whether rec is valid (false also when too deep for scanRecord).
func (ks *keyScanner) fields(rec []byte, f *keyFields) bool {
	for i, s := range ks.shapes {
		if s == nil {
			break
		}
		if s.match(rec, f) {
			s.hits++
			if i > 0 { // most recently matched first
				copy(ks.shapes[1:i+1], ks.shapes[:i])
				ks.shapes[0] = s
			}
			ks.misses, ks.backoff = 0, 0
			return true
		}
	}
	var ok bool
	if *f, ok = scanRecord(rec); !ok {
		return false
	}
	if ks.misses++; ks.misses > ks.backoff {
		ks.learn(rec, *f)
	}
	return true
}

// learn makes rec's shape the first, dropping the last; if that one never
// matched, learning backs off.
func (ks *keyScanner) learn(rec []byte, f keyFields) {
	s := learnShape(rec, f)
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

// key returns rec's key as fastRecordKey does.
func (ks *keyScanner) key(rec []byte) (rawKey, bool) {
	var f keyFields
	if !ks.fields(rec, &f) {
		return rawKey{}, false
	}
	return keyOfFields(&f)
}
