package cdc

import "strconv"

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
		dst = strconv.AppendUint(dst, m.Update.Time, 10)
		dst = append(dst, fastDiff...)
		dst = strconv.AppendInt(dst, m.Update.Diff, 10)
		return append(dst, "}}"...)
	case KindProgress:
		return appendProgressJSON(dst, &m.Progress)
	case KindFinish:
		dst = append(dst, fastFinish...)
		dst = strconv.AppendUint(dst, m.Finish.Time, 10)
		return append(dst, "}}"...)
	}
	return append(dst, "{}"...)
}

func appendProgressJSON(dst []byte, p *Progress) []byte {
	dst = append(dst, `{"progress":{"lower":`...)
	dst = strconv.AppendUint(dst, p.Lower, 10)
	if !p.Unbounded {
		dst = append(dst, `,"upper":`...)
		dst = strconv.AppendUint(dst, p.Upper, 10)
	}
	dst = append(dst, `,"counts":[`...)
	for k, c := range p.Counts {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"time":`...)
		dst = strconv.AppendUint(dst, c.Time, 10)
		dst = append(dst, `,"count":`...)
		dst = strconv.AppendUint(dst, c.Count, 10)
		dst = append(dst, '}')
	}
	return append(dst, "]}}"...)
}
