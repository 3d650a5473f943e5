package recovery

import (
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/wal"
)

// accepted is a message the receiver accepted, as the apply goroutine
// hands it to the prepare goroutine for the WAL: the message (owned by its
// request until the request is finished) and where it came from.
type accepted struct {
	m                    *cdc.Message
	source, line, offset uint64
}

// prepareLoop encodes each applied batch for storage while the apply
// goroutine runs the next one and the commit goroutine commits the one
// before: the WAL entries, the output log records and the output bytes,
// which the commit goroutine writes once the batch has committed.
func (p *Processor) prepareLoop() {
	defer close(p.commits)
	for w := range p.prepared {
		if p.failure() == nil {
			p.encodeWAL(w)
			if err := p.render(w); err != nil {
				p.fail(err) // the batch does not commit
			} else {
				w.releaseRequests()
			}
		}
		p.commits <- w
	}
}

// releaseRequests tells the requests that the batch has done with what
// they carry (see Pending.release), once it is encoded: nothing after
// reads their slices, only copies (the cursor values, the WAL bytes, the
// held messages' values) and the data their messages point to. The
// exceptions are a request that goes on in the next batch, and one that
// stopped with an error, which may name one of its messages.
func (w *work) releaseRequests() {
	for i, r := range w.reqs {
		if w.errs[i] == nil && (!w.split || i < len(w.reqs)-1) {
			r.pending.release()
		}
	}
}

// encodeWAL fills w.wal with the batch's accepted messages, numbered in
// arrival order from w.firstArrival.
func (p *Processor) encodeWAL(w *work) {
	for i := range w.accepted {
		a := &w.accepted[i]
		e := wal.Entry{Time: a.m.Time(), Arrival: w.firstArrival + uint64(i), Source: a.source, Line: a.line, Offset: a.offset}
		if a.m.Kind == cdc.KindProgress {
			e.Span = e.Time - a.m.Progress.Lower // indexed from its lower bound (see walstore.go)
		}
		w.wal.EndEntry(cdc.AppendBinary(w.wal.BeginEntry(e), a.m)) // no function value to call
	}
}

// render encodes the batch's output for the output log and the sinks. It
// fails only when a msgpack output cannot carry a record exactly (see
// cdc.ErrMsgpackInexact): push refuses such input, so only data accepted
// by an earlier run without msgpack output can get here.
func (p *Processor) render(w *work) error {
	first := w.cp.NextOutput - uint64(len(w.out))
	for i := range w.out {
		m := &w.out[i]
		w.output.add(m)
		var err error
		if p.opts.Sink != nil {
			w.sinkBytes, err = cdc.AppendMessage(w.sinkBytes, p.opts.SinkFormat, m)
		}
		if p.opts.Live != nil && err == nil {
			w.liveBytes, err = cdc.AppendMessage(w.liveBytes, p.opts.LiveFormat, m)
		}
		if err != nil {
			return fmt.Errorf("output record %d: %w", first+uint64(i), err)
		}
	}
	return nil
}
