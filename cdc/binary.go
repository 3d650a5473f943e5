package cdc

import "math"

// The storage encoding: compact, lossless msgpack for the write-ahead log.
//
// Each message is one msgpack array whose first element is the Kind:
//
//	update:   [1, data, time, diff]      fixarray(4), 0x01, bin, uint, int
//	progress: [2, lower, upper, counts]  fixarray(4), 0x02, uint, uint or nil, array
//	finish:   [3, time]                  fixarray(2), 0x03, uint
//
// data is a msgpack bin holding the canonical JSON bytes, so a round trip
// never changes them; upper is nil when the statement is unbounded; counts
// is a flat array t1, c1, t2, c2, … of the non-zero counts in increasing
// time order. Integers use the shortest msgpack encoding when written and
// any integer encoding when read. Messages are concatenated without
// framing; a new kind or layout would take a new first element.

// AppendBinary appends m in the storage encoding. m must be valid (see
// Message.Validate) for ParseBinary to accept the result.
func AppendBinary(dst []byte, m *Message) []byte {
	switch m.Kind {
	case KindUpdate:
		u := &m.Update
		if n := len(u.Data); n <= math.MaxUint8 {
			// The commonest header written at once, rather than
			// through appendMpHeader's general switch.
			dst = append(dst, 0x94, byte(KindUpdate), 0xc4, byte(n))
		} else {
			dst = appendMpHeader(append(dst, 0x94, byte(KindUpdate)), mpBin, n)
		}
		dst = append(dst, u.Data...)
		dst = appendMpUint(dst, u.Time)
		if d := u.Diff; d >= -32 && d <= 0x7f {
			return append(dst, byte(d)) // a fixint, as most diffs are: no call
		}
		return appendMpInt(dst, u.Diff)
	case KindProgress:
		p := &m.Progress
		dst = append(dst, 0x94, byte(KindProgress))
		dst = appendMpUint(dst, p.Lower)
		if p.Unbounded {
			dst = append(dst, 0xc0)
		} else {
			dst = appendMpUint(dst, p.Upper)
		}
		if n := 2 * len(p.Counts); n <= 15 {
			dst = append(dst, 0x90|byte(n))
		} else {
			dst = appendMpHeader(dst, mpArray, n)
		}
		for _, c := range p.Counts {
			dst = appendMpUint(dst, c.Time)
			dst = appendMpUint(dst, c.Count)
		}
		return dst
	case KindFinish:
		dst = append(dst, 0x92, byte(KindFinish))
		return appendMpUint(dst, m.Finish.Time)
	}
	return append(dst, 0x91, 0x00)
}

// BinaryKind returns the Kind of the message at the front of b, in the
// storage encoding, without decoding it: its array's first element. It
// returns 0 when b does not start like a message; ParseBinary checks the
// rest.
func BinaryKind(b []byte) Kind {
	if len(b) < 2 || b[0]&0xf0 != 0x90 || b[1] >= 0x80 {
		return 0
	}
	return Kind(b[1])
}

// ParseBinary decodes one message in the storage encoding from the front
// of b into *m and returns the number of bytes it took. m.Update.Data
// aliases b (with its capacity capped). It checks everything a decoder
// checks, data being canonical JSON included, so a damaged record is an
// error rather than a wrong message; the error for a message cut short
// wraps io.ErrUnexpectedEOF. On error n is 0 and *m is the zero Message.
func ParseBinary(b []byte, m *Message) (n int, err error) {
	d := mpDecoder{b: b}
	if err := d.binary(m); err != nil {
		*m = Message{}
		return 0, err
	}
	return d.i, nil
}

func binaryError(format string, args ...any) error {
	return errorf("binary message: "+format, args...)
}

func (d *mpDecoder) binary(m *Message) error {
	family, n, err := d.header()
	if err != nil {
		return err
	}
	if family != mpArray || n < 2 {
		return binaryError("not an array of a kind and fields")
	}
	kind, err := d.binUint("kind")
	if err != nil {
		return err
	}
	want := 0
	switch kind {
	case uint64(KindUpdate), uint64(KindProgress):
		want = 4
	case uint64(KindFinish):
		want = 2
	default:
		return binaryError("unknown kind %d", kind)
	}
	if n != want {
		return binaryError("%s has %d fields, want %d", Kind(kind), n-1, want-1)
	}
	switch Kind(kind) {
	case KindUpdate:
		return d.binaryUpdate(m)
	case KindProgress:
		return d.binaryProgress(m)
	}
	t, err := d.binUint("finish time")
	*m = Message{Kind: KindFinish, Finish: Finish{Time: t}}
	return err
}

// binUint reads an unsigned integer named what.
func (d *mpDecoder) binUint(what string) (uint64, error) {
	n, ok, err := d.number()
	if err != nil {
		return 0, err
	}
	if v, fits := n.uintOK(); ok && fits && !n.float {
		return v, nil
	}
	return 0, binaryError("%s is not an unsigned integer", what)
}

func (d *mpDecoder) binaryUpdate(m *Message) error {
	family, n, err := d.header()
	if err != nil {
		return err
	}
	if family != mpBin {
		return binaryError("update data is not bin")
	}
	data, err := d.bytes(n)
	if err != nil {
		return err
	}
	if !IsCanonical(data) {
		return binaryError("update data is not canonical JSON")
	}
	t, err := d.binUint("update time")
	if err != nil {
		return err
	}
	diff, ok, err := d.number()
	if err != nil {
		return err
	}
	if !ok || diff.float || !diff.exact || diff.mag == 0 || (diff.neg && diff.mag > 1<<63) || (!diff.neg && diff.mag > 1<<63-1) {
		return binaryError("update diff is not a non-zero int64")
	}
	v := int64(diff.mag)
	if diff.neg {
		v = -int64(diff.mag-1) - 1
	}
	*m = Message{Kind: KindUpdate, Update: Update{Data: data, Time: t, Diff: v}}
	return nil
}

func (d *mpDecoder) binaryProgress(m *Message) error {
	var p Progress
	var err error
	if p.Lower, err = d.binUint("progress lower"); err != nil {
		return err
	}
	if c, err := d.peek(); err != nil {
		return err
	} else if c == 0xc0 {
		d.i++
		p.Unbounded = true
	} else if p.Upper, err = d.binUint("progress upper"); err != nil {
		return err
	}
	family, n, err := d.header()
	if err != nil {
		return err
	}
	if family != mpArray || n%2 != 0 {
		return binaryError("progress counts are not an array of time, count pairs")
	}
	if n > 0 {
		if err := d.need(n); err != nil { // at least a byte each
			return err
		}
		p.Counts = make([]Count, n/2)
		for k := range p.Counts {
			if p.Counts[k].Time, err = d.binUint("progress count time"); err != nil {
				return err
			}
			if p.Counts[k].Count, err = d.binUint("progress count"); err != nil {
				return err
			}
		}
	}
	if err := p.validate(); err != nil {
		return binaryError("%v", err)
	}
	*m = Message{Kind: KindProgress, Progress: p}
	return nil
}
