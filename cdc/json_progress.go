package cdc

// The general JSON decoder's progress statements.

func (d *jsonDecoder) progress(m *Message) error {
	if err := d.open(inProgress); err != nil {
		return err
	}
	var p progressFields
	var scratch [8]Count
	for more := !d.empty(); more; {
		key, err := d.key()
		if err != nil {
			return err
		}
		var bit uint8
		switch string(key) {
		case "lower":
			bit = fLower
			if p.seen&bit == 0 {
				p.lower, _, err = d.bound("lower")
			}
		case "upper":
			bit = fUpper
			if p.seen&bit == 0 {
				p.upper, p.unbounded, err = d.bound("upper")
			}
		case "counts":
			bit = fCounts
			if p.seen&bit == 0 {
				p.counts, err = d.counts(scratch[:0])
			}
		case "time":
			bit = fTime
			if p.seen&bit == 0 {
				p.time, err = d.uint(inProgress, "time")
			}
		case "count":
			bit = fCount
			if p.seen&bit == 0 {
				p.count, err = d.uint(inProgress, "count")
			}
		default:
			return unknownField(inProgress, key, `"lower", "upper" and "counts"`)
		}
		if p.seen&bit != 0 {
			return duplicate(inProgress, string(key))
		}
		if err != nil {
			return err
		}
		p.seen |= bit
		if more, err = d.next('}'); err != nil {
			return err
		}
	}
	return p.build(m)
}

// bound reads "lower" or "upper": a number, or an array of at most one
// number. For "upper", null and [] mean unbounded.
func (d *jsonDecoder) bound(field string) (t uint64, unbounded bool, err error) {
	if d.i >= len(d.b) {
		return 0, false, d.wrongType(inProgress, field, "a number")
	}
	switch d.b[d.i] {
	case 'n':
		if field == "upper" {
			if end, ok := literalEnd(d.b, d.i, "null"); ok {
				d.i = end
				return 0, true, nil
			}
		}
	case '[':
		return d.boundArray(field)
	}
	t, err = d.uint(inProgress, field)
	return t, false, err
}

func (d *jsonDecoder) boundArray(field string) (t uint64, unbounded bool, err error) {
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		if field == "lower" {
			return 0, false, errorf(inProgress + `"lower" is an empty array (only "upper" may be [], meaning unbounded)`)
		}
		return 0, true, nil
	}
	if t, err = d.uint(inProgress, field); err != nil {
		return 0, false, err
	}
	more, err := d.next(']')
	if err != nil {
		return 0, false, err
	}
	if more {
		return 0, false, errorf(inProgress+"%q has more than one element", field)
	}
	return t, false, nil
}

// counts reads the "counts" array (or null, meaning none), appending its
// entries to cs.
func (d *jsonDecoder) counts(cs []Count) ([]Count, error) {
	if end, ok := literalEnd(d.b, d.i, "null"); ok {
		d.i = end
		return cs, nil
	}
	if d.i >= len(d.b) || d.b[d.i] != '[' {
		return cs, d.wrongType(inProgress, "counts", "an array")
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return cs, nil
	}
	for k := 0; ; k++ {
		c, err := d.countEntry(k)
		if err != nil {
			return cs, err
		}
		cs = append(cs, c)
		more, err := d.next(']')
		if err != nil || !more {
			return cs, err
		}
	}
}

// countEntry reads {"time": t, "count": c}, entry k of "counts".
func (d *jsonDecoder) countEntry(k int) (Count, error) {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return Count{}, d.wrongType(countElem(k), "", "an object")
	}
	d.i++
	d.ws()
	var f countFields
	for more := !d.empty(); more; {
		key, err := d.key()
		if err != nil {
			return Count{}, err
		}
		var bit uint8
		switch string(key) {
		case "time":
			bit = fTime
			if f.seen&bit == 0 {
				f.c.Time, err = d.countUint(k, "time")
			}
		case "count":
			bit = fCount
			if f.seen&bit == 0 {
				f.c.Count, err = d.countUint(k, "count")
			}
		default:
			return Count{}, unknownField(countWhat(k), key, `"time" and "count"`)
		}
		if f.seen&bit != 0 {
			return Count{}, duplicate(countWhat(k), string(key))
		}
		if err != nil {
			return Count{}, err
		}
		f.seen |= bit
		if more, err = d.next('}'); err != nil {
			return Count{}, err
		}
	}
	return f.c, f.check(k)
}

// countUint reads field of count entry k, building the entry's name only
// for an error.
func (d *jsonDecoder) countUint(k int, field string) (uint64, error) {
	if v, end, ok := fastUint(d.b, d.i); ok && plainEnd(d.b, end) {
		d.i = end
		return v, nil
	}
	if d.i < len(d.b) && (d.b[d.i] == '-' || isDigit(d.b[d.i])) {
		if end, msg := numberEnd(d.b, d.i); msg == "" {
			if v, ok := jsonNum(d.b[d.i:end]).uintOK(); ok {
				d.i = end
				return v, nil
			}
		}
	}
	return d.uint(countWhat(k), field)
}
