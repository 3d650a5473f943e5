package cdc

// AppendJSON appends m in the primary compact JSON form, without a line end:
//
//	{"update":{"data":"k","time":7,"diff":1}}
//	{"progress":{"lower":5,"upper":8,"counts":[{"time":7,"count":2}]}}
//	{"finish":{"time":7}}
//
// An unbounded progress statement has no "upper"; one without counts has
// "counts":[]. Data is written as is, so m must be valid (see
// Message.Validate) for the output to decode; a message of unknown kind is
// written as {}, which decoders reject.
func AppendJSON(dst []byte, m *Message) []byte {
	switch m.Kind {
	case KindUpdate:
		dst = append(dst, fastUpdate...)
		dst = append(dst, m.Update.Data...)
		dst = append(dst, fastTime...)
		dst = appendUint(dst, m.Update.Time)
		dst = append(dst, fastDiff...)
		dst = appendInt(dst, m.Update.Diff)
		return append(dst, "}}"...)
	case KindProgress:
		return appendProgressJSON(dst, &m.Progress)
	case KindFinish:
		dst = append(dst, fastFinish...)
		dst = appendUint(dst, m.Finish.Time)
		return append(dst, "}}"...)
	}
	return append(dst, "{}"...)
}

func appendProgressJSON(dst []byte, p *Progress) []byte {
	dst = append(dst, `{"progress":{"lower":`...)
	dst = appendUint(dst, p.Lower)
	if !p.Unbounded {
		dst = append(dst, `,"upper":`...)
		dst = appendUint(dst, p.Upper)
	}
	dst = append(dst, `,"counts":[`...)
	for k, c := range p.Counts {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"time":`...)
		dst = appendUint(dst, c.Time)
		dst = append(dst, `,"count":`...)
		dst = appendUint(dst, c.Count)
		dst = append(dst, '}')
	}
	return append(dst, "]}}"...)
}
