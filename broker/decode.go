package broker

import (
	"bytes"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// Part is one message of a record value, or a part that could not be
// decoded (Reason is then set).
type Part struct {
	Msg    cdc.Message
	Raw    []byte
	Reason string
}

// DecodeValue appends the messages of one Kafka record or JetStream
// message value to parts. A value carries one message, or several: JSON
// Lines separated by '\n' (blank lines and a final line end are allowed),
// or msgpack messages one after the other. Producers such as Materialize
// and Debezium write one message per record; a value with several is
// accepted so that a stream copied in chunks (kcat, nats pub from a file)
// reads the same. A msgpack part that cannot be decoded takes the rest of
// the value with it, since the next message's start cannot be found.
// Decoded data may alias value.
func DecodeValue(f cdc.Format, value []byte, parts []Part) []Part {
	if f == cdc.Msgpack {
		for len(value) > 0 {
			var p Part
			n, err := cdc.ParseMsgpack(value, &p.Msg)
			if err != nil {
				return append(parts, Part{Raw: value, Reason: err.Error()})
			}
			p.Raw, value = value[:n], value[n:]
			parts = append(parts, p)
		}
		return parts
	}
	for len(value) > 0 {
		line := value
		if i := bytes.IndexByte(value, '\n'); i >= 0 {
			line, value = value[:i], value[i+1:]
		} else {
			value = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var p Part
		p.Raw = line
		if err := cdc.ParseJSON(line, &p.Msg); err != nil {
			p.Reason = err.Error()
		}
		parts = append(parts, p)
	}
	return parts
}

// Fill moves parts into b at pos until b holds b.Max messages and
// rejects. Under policy Fail a bad part stops it with a *cdc.DecodeError
// (the parts before it are in b); under Skip and Quarantine it becomes a
// reject. It returns how many parts it took.
func Fill(b *recovery.SourceBatch, parts []Part, pos cdc.Pos) (int, error) {
	for i := range parts {
		if b.Len() >= b.Max {
			return i, nil
		}
		p := &parts[i]
		if p.Reason == "" {
			b.Msgs = append(b.Msgs, p.Msg)
			b.Pos = append(b.Pos, pos)
			continue
		}
		if b.Policy == cdc.Fail {
			return i, &cdc.DecodeError{Pos: pos, Reason: p.Reason}
		}
		rj := cdc.Reject{Pos: pos, Reason: p.Reason, Index: len(b.Msgs)}
		if len(p.Raw) > cdc.MaxMessageSize {
			rj.Raw, rj.Truncated = append([]byte(nil), p.Raw[:cdc.RejectHead]...), true
		} else {
			rj.Raw = append([]byte(nil), p.Raw...)
		}
		b.Rejects = append(b.Rejects, rj)
	}
	return len(parts), nil
}
