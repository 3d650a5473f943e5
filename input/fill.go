package input

import (
	"errors"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// fill decodes messages from r into b until b holds b.Max messages and
// rejects, or b.MaxBytes of input, and reports what stopped it: nil when
// b is full, cdc.ErrPaused when the input has nothing more at once (b may
// be empty), or the error that ends the input: io.EOF, cdc.ErrUnfinished,
// a *cdc.DecodeError (policy Fail, or a Fatal one under every policy), or
// a read error. Input that does not decode goes to b.Rejects under
// policies Skip and Quarantine.
func fill(r *cdc.Reader, b *recovery.SourceBatch) error {
	start := r.Offset()
	for b.Len() < b.Max && (b.MaxBytes <= 0 || r.Offset()-start < int64(b.MaxBytes)) {
		// Decode in place: a Message is large enough that copying each
		// one into the batch shows in a profile.
		if len(b.Msgs) < cap(b.Msgs) {
			b.Msgs = b.Msgs[:len(b.Msgs)+1]
		} else {
			b.Msgs = append(b.Msgs, cdc.Message{})
		}
		err := r.Next(&b.Msgs[len(b.Msgs)-1])
		if err == nil {
			b.Pos = append(b.Pos, r.Pos())
			continue
		}
		b.Msgs = b.Msgs[:len(b.Msgs)-1]
		var de *cdc.DecodeError
		if errors.As(err, &de) && !de.Fatal && b.Policy != cdc.Fail {
			rj := r.Reject(de)
			rj.Index = len(b.Msgs)
			b.Rejects = append(b.Rejects, rj)
			continue
		}
		return err
	}
	return nil
}

// resumeAt returns where the input stands after fill returned err: the
// offset and line to commit as the cursor. A decode error stops the input
// before the bad message, not after it: a rerun must meet the message
// again, or read it once it is corrected.
func resumeAt(r *cdc.Reader, err error) (offset, line int64) {
	var de *cdc.DecodeError
	if errors.As(err, &de) {
		return de.Pos.Offset, max(de.Pos.Line-1, 0)
	}
	return r.Offset(), r.Line()
}
