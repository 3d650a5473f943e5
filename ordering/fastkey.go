package ordering

import (
	"bytes"
	"encoding/binary"
)

// The key of a record without allocating: the merge's hot path. It covers
// the shapes records have in practice (created_at as epoch seconds with an
// optional fraction, or as an RFC 3339 date-time; sequence numbers as
// digit strings or integers) and hands everything else, errors included,
// to the exact slow path (recordKeySlow). What it accepts it parses as the
// slow path does: FuzzFastRecordKey holds it to that.

// rawKey is a Key whose sequence number is still in the record's bytes:
// its canonical digits (no leading zero; empty for 0), as SeqNum holds
// them.
type rawKey struct {
	ts  Timestamp
	seq []byte
}

// key returns k as a Key (a copy of the digits).
func (k *rawKey) key() Key { return Key{CreatedAt: k.ts, Seq: SeqNum{digits: string(k.seq)}} }

// rawKeyOf returns k as a rawKey.
func rawKeyOf(k Key) rawKey { return rawKey{ts: k.CreatedAt, seq: []byte(k.Seq.digits)} }

// fastRecordKey returns the key of rec when it is valid JSON and its key
// is in a common shape; ok is false otherwise, and then only the slow path
// can say what the key is or what is wrong.
func fastRecordKey(rec []byte) (k rawKey, ok bool) {
	f, ok := scanRecord(rec)
	if !ok {
		return k, false
	}
	return keyOfFields(&f)
}

// keyOfFields returns the key given by a valid record's key fields, as
// recordKeySlow reads it, when they are in a common shape.
func keyOfFields(f *keyFields) (k rawKey, ok bool) {
	at, seq, ok := keyValues(f)
	if !ok {
		return k, false
	}
	if k.ts, ok = fastTimestamp(at); !ok {
		return k, false
	}
	k.seq, ok = fastSeqNum(seq)
	return k, ok
}

// keyValues picks the raw created_at and sequence number from a record's
// key fields, as recordKeySlow does; ok is false where that one fails.
func keyValues(f *keyFields) (at, seq []byte, ok bool) {
	if f.hasMeta && !f.metaObj {
		return nil, nil, false
	}
	at, seq = f.meta[0], f.meta[1]
	if at == nil || seq == nil {
		if f.hasDyn && !f.dynObj {
			return nil, nil, false
		}
		if at == nil {
			at = f.dyn[0]
		}
		if seq == nil {
			seq = f.dyn[1]
		}
		if at == nil || seq == nil {
			return nil, nil, false
		}
	}
	return at, seq, true
}

// plainText returns what the JSON number or escape-free string raw stands
// for; ok is false for any other value.
func plainText(raw []byte) ([]byte, bool) {
	switch {
	case len(raw) == 0:
		return nil, false
	case raw[0] != '"':
		return raw, raw[0] >= '0' && raw[0] <= '9'
	case len(raw) < 2:
		return nil, false
	}
	text := raw[1 : len(raw)-1]
	return text, bytes.IndexByte(text, '\\') < 0
}

// fastSeqNum reads a sequence number given as a JSON integer or a string of
// digits, as ParseSeqNum does.
func fastSeqNum(raw []byte) ([]byte, bool) {
	text := raw // a JSON number, or a string's contents (an escape is no digit)
	if len(raw) >= 2 && raw[0] == '"' {
		text = raw[1 : len(raw)-1]
	}
	if len(text) == 0 || !allDigits(text) {
		return nil, false
	}
	for len(text) > 0 && text[0] == '0' {
		text = text[1:]
	}
	return text, true
}

// allDigits reports whether every byte of b is an ASCII digit, eight at a
// time (see nonDigits).
func allDigits(b []byte) bool {
	for ; len(b) >= 8; b = b[8:] {
		if nonDigits(binary.LittleEndian.Uint64(b)) != 0 {
			return false
		}
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fastTimestamp reads created_at given as a JSON number or an escape-free
// string, as ParseTimestamp does, for non-negative epoch seconds without an
// exponent and for RFC 3339 date-times.
func fastTimestamp(raw []byte) (Timestamp, bool) {
	text, ok := plainText(raw)
	if !ok || len(text) == 0 || text[0] == '-' {
		return Timestamp{}, false
	}
	if looksNumeric(text) {
		return fastEpoch(text)
	}
	return fastRFC3339(text)
}

// fastEpoch reads digits with an optional fraction: at most 18 significant
// digits of seconds, the fraction floored to the nanosecond.
func fastEpoch(text []byte) (Timestamp, bool) {
	i := 0
	for i < len(text) && text[i] == '0' {
		i++
	}
	start := i
	var sec int64
	for ; i < len(text) && text[i] >= '0' && text[i] <= '9'; i++ {
		if i-start == 18 {
			return Timestamp{}, false
		}
		sec = sec*10 + int64(text[i]-'0')
	}
	if i == 0 {
		return Timestamp{}, false // no integer digits
	}
	var nsec int32
	if i < len(text) && text[i] == '.' {
		i++
		fracStart := i
		for ; i < len(text) && text[i] >= '0' && text[i] <= '9'; i++ {
			if i-fracStart < 9 {
				nsec = nsec*10 + int32(text[i]-'0')
			}
		}
		n := i - fracStart
		if n == 0 {
			return Timestamp{}, false
		}
		for ; n < 9; n++ {
			nsec *= 10
		}
	}
	if i != len(text) {
		return Timestamp{}, false
	}
	return Timestamp{sec: sec, nsec: nsec}, true
}

// fastRFC3339 reads "2006-01-02T15:04:05[.fraction](Z|±07:00)" by RFC
// 3339's grammar: fixed-width fields in range, the day valid for its
// month, any number of fraction digits of which nine count, Z or an offset
// below 24 hours, and T and Z in either case (ABNF strings are
// case-insensitive; RFC 3339 section 5.6 says so of these two). Anything
// else is not a date-time.
func fastRFC3339(s []byte) (Timestamp, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") ||
		s[4] != '-' || s[7] != '-' || s[10] != 'T' && s[10] != 't' || s[13] != ':' || s[16] != ':' {
		return Timestamp{}, false
	}
	year, ok1 := fixedUint(s[0:4], 0, 9999)
	month, ok2 := fixedUint(s[5:7], 1, 12)
	day, ok3 := fixedUint(s[8:10], 1, daysIn(month, year))
	hour, ok4 := fixedUint(s[11:13], 0, 23)
	minute, ok5 := fixedUint(s[14:16], 0, 59)
	second, ok6 := fixedUint(s[17:19], 0, 59)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return Timestamp{}, false
	}
	s = s[19:]
	var nsec int64
	if len(s) >= 2 && s[0] == '.' && s[1] >= '0' && s[1] <= '9' {
		n := 1
		for ; n < len(s) && s[n] >= '0' && s[n] <= '9'; n++ {
			if n <= 9 {
				nsec = nsec*10 + int64(s[n]-'0')
			}
		}
		for d := n - 1; d < 9; d++ {
			nsec *= 10
		}
		s = s[n:]
	}
	var offset int64
	if len(s) != 1 || s[0] != 'Z' && s[0] != 'z' {
		if len(s) != len("-07:00") || s[0] != '+' && s[0] != '-' || s[3] != ':' {
			return Timestamp{}, false
		}
		hh, ok1 := fixedUint(s[1:3], 0, 23)
		mm, ok2 := fixedUint(s[4:6], 0, 59)
		if !ok1 || !ok2 {
			return Timestamp{}, false
		}
		offset = int64(hh*60+mm) * 60
		if s[0] == '-' {
			offset = -offset
		}
	}
	sec := daysSinceEpoch(year, month, day)*86400 + int64(hour*3600+minute*60+second) - offset
	return Timestamp{sec: sec, nsec: int32(nsec)}, true
}

// fixedUint reads s, all digits, as a number in [lo, hi].
func fixedUint(s []byte, lo, hi int) (int, bool) {
	x := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		x = x*10 + int(c-'0')
	}
	return x, x >= lo && x <= hi
}

func isLeap(year int) bool { return year%4 == 0 && (year%100 != 0 || year%400 == 0) }

// daysIn returns the days of month (1-12) in year; 31 for a month out of
// range, whose parse fails anyway.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if isLeap(year) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysSinceEpoch returns the days from 1970-01-01 to the given date of the
// proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
func daysSinceEpoch(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	m := int64(month)
	if m > 2 {
		m -= 3
	} else {
		m += 9
	}
	doy := (153*m+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
