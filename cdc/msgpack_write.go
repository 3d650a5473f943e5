package cdc

// AppendMsgpack appends m as a msgpack map of the same shape and keys as
// the JSON form, e.g. {"update":{"data":…,"time":7,"diff":1}}. Data is
// written as a native msgpack value converted from its canonical JSON:
// integers written without fraction or exponent that fit an int64 or
// uint64 as msgpack integers, other numbers as float64 (so 7.0 comes back
// as 7, and numbers beyond float64's range become infinities, which
// ParseMsgpack rejects), strings as str, objects as maps with keys in
// canonical order, arrays, booleans and nil. m must be valid (see
// Message.Validate); invalid data is written as nil.
func AppendMsgpack(dst []byte, m *Message) []byte {
	switch m.Kind {
	case KindUpdate:
		dst = append(dst, 0x81)
		dst = appendMpStr(dst, "update")
		dst = append(dst, 0x83)
		dst = appendMpStr(dst, "data")
		dst = appendDataMsgpack(dst, m.Update.Data)
		dst = appendMpStr(dst, "time")
		dst = appendMpUint(dst, m.Update.Time)
		dst = appendMpStr(dst, "diff")
		return appendMpInt(dst, m.Update.Diff)
	case KindProgress:
		return appendProgressMsgpack(dst, &m.Progress)
	case KindFinish:
		dst = append(dst, 0x81)
		dst = appendMpStr(dst, "finish")
		dst = append(dst, 0x81)
		dst = appendMpStr(dst, "time")
		return appendMpUint(dst, m.Finish.Time)
	}
	return append(dst, 0x80)
}

func appendProgressMsgpack(dst []byte, p *Progress) []byte {
	dst = append(dst, 0x81)
	dst = appendMpStr(dst, "progress")
	if p.Unbounded {
		dst = append(dst, 0x82)
	} else {
		dst = append(dst, 0x83)
	}
	dst = appendMpStr(dst, "lower")
	dst = appendMpUint(dst, p.Lower)
	if !p.Unbounded {
		dst = appendMpStr(dst, "upper")
		dst = appendMpUint(dst, p.Upper)
	}
	dst = appendMpStr(dst, "counts")
	dst = appendMpHeader(dst, mpArray, len(p.Counts))
	for _, c := range p.Counts {
		dst = append(dst, 0x82)
		dst = appendMpStr(dst, "time")
		dst = appendMpUint(dst, c.Time)
		dst = appendMpStr(dst, "count")
		dst = appendMpUint(dst, c.Count)
	}
	return dst
}
