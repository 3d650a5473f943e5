package recovery

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/wal"
)

// work is one group commit, prepared by the apply goroutine for the commit
// goroutine: everything to write, and the results to deliver once it is
// durable.
type work struct {
	reqs    []*request
	results []Result
	errs    []error

	wal        wal.Batch
	output     outputChunk
	sinkBytes  []byte
	liveBytes  []byte
	quarantine []quarantineRecord
	cp         checkpoint
	status     receiverState
}

// applyLoop gathers requests into batches, runs them through the receiver
// and hands each batch to the commit goroutine.
func (p *Processor) applyLoop() {
	defer close(p.commits)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var out []cdc.Message
	for first := range p.requests {
		reqs := p.collect(first, timer)
		w := &work{reqs: reqs, results: make([]Result, len(reqs)), errs: make([]error, len(reqs))}
		if err := p.failure(); err != nil {
			for i := range w.errs {
				w.errs[i] = err
			}
		} else {
			out = p.apply(w, out[:0])
		}
		p.commits <- w
	}
}

// collect gathers requests after first until the batch holds
// BatchMessages messages or BatchDelay has passed with none arriving.
func (p *Processor) collect(first *request, timer *time.Timer) []*request {
	reqs := []*request{first}
	n := len(first.Msgs)
	timer.Reset(p.opts.BatchDelay)
	defer timer.Stop()
	for n < p.opts.BatchMessages {
		select {
		case r, ok := <-p.requests:
			if !ok {
				return reqs
			}
			reqs = append(reqs, r)
			n += len(r.Msgs)
		case <-timer.C:
			return reqs
		}
	}
	return reqs
}

// apply pushes every request of w through the receiver and fills w.
func (p *Processor) apply(w *work, out []cdc.Message) []cdc.Message {
	w.output.first = p.cp.NextOutput
	var scratch []byte
	for i, r := range w.reqs {
		res := &w.results[i]
		if r.CursorCheck && !bytes.Equal(p.cp.Cursors[r.Cursor], r.CursorPrev) {
			w.errs[i] = fmt.Errorf("%w: cursor %s", ErrCursorMoved, r.Cursor)
			continue
		}
		for j := range r.Msgs {
			m := &r.Msgs[j]
			var at cdc.Pos
			if r.Pos != nil && j < len(r.Pos) {
				at = r.Pos[j]
			}
			var o demangle.Outcome
			var err error
			before := len(out)
			out, o, err = p.recv.Push(out, m, at)
			if err != nil {
				if p.opts.OnError == cdc.Fail {
					w.errs[i] = err
					break
				}
				p.setAside(w, res, at, m, err)
			}
			res.Applied++
			res.Output += len(out) - before
			switch o {
			case demangle.Accepted:
				res.Accepted++
				scratch = cdc.AppendBinary(scratch[:0], m)
				w.wal.Add(wal.Entry{Time: m.Time(), Arrival: p.cp.NextArrival, Source: p.cp.source(at.Source),
					Line: nonNegative(at.Line), Offset: nonNegative(at.Offset), Body: scratch})
				p.cp.NextArrival++
			case demangle.Duplicate:
				res.Duplicates++
			case demangle.Stale:
				res.Stale++
			}
		}
		for _, rj := range r.Rejects {
			p.reject(w, res, rj)
		}
		if w.errs[i] == nil && r.Cursor != "" {
			if p.cp.Cursors == nil {
				p.cp.Cursors = map[string][]byte{}
			}
			p.cp.Cursors[r.Cursor] = append([]byte(nil), r.CursorValue...)
		}
	}
	p.emit(w, out)
	p.cp.Frontier, p.cp.Done = p.recv.Frontier()
	p.cp.Stats = p.recv.Stats()
	p.cp.NextBatch++
	w.cp = p.cp.clone()
	w.status = captureReceiver(p.recv)
	return out
}

// emit numbers the batch's output records and renders them for the sinks.
func (p *Processor) emit(w *work, out []cdc.Message) {
	for i := range out {
		m := &out[i]
		w.output.add(m)
		if p.opts.Sink != nil {
			w.sinkBytes = cdc.AppendMessage(w.sinkBytes, p.opts.SinkFormat, m)
		}
		if p.opts.Live != nil {
			w.liveBytes = cdc.AppendMessage(w.liveBytes, p.opts.LiveFormat, m)
		}
	}
	p.cp.NextOutput += uint64(len(out))
	if p.opts.Sink != nil {
		p.cp.Sink.Size += int64(len(w.sinkBytes))
		p.cp.Sink.Next = p.cp.NextOutput
	}
}

// setAside applies policy Skip or Quarantine to a rejected message.
func (p *Processor) setAside(w *work, res *Result, at cdc.Pos, m *cdc.Message, err error) {
	reason := err.Error()
	var v *demangle.ViolationError
	if errors.As(err, &v) {
		reason = v.Kind.String() + ": " + v.Detail + " (earlier message at " + v.EarlierAt.String() + ")"
	}
	p.reject(w, res, Reject{Pos: at, Raw: cdc.AppendJSON(nil, m), Reason: reason})
}

// reject counts or quarantines refused input, by policy.
func (p *Processor) reject(w *work, res *Result, rj Reject) {
	if p.opts.OnError == cdc.Quarantine {
		w.quarantine = append(w.quarantine, quarantineRecord{
			Seq: p.cp.NextQuarantine, Source: rj.Pos.Source, Line: rj.Pos.Line, Offset: rj.Pos.Offset,
			Reason: rj.Reason, Raw: rj.Raw, Time: time.Now().UTC().Format(time.RFC3339Nano),
		})
		p.cp.NextQuarantine++
		p.cp.Quarantined++
		res.Quarantined++
		return
	}
	p.cp.Skipped++
	res.Skipped++
	p.log.Warn("skipped bad input", "at", rj.Pos.String(), "reason", rj.Reason)
}

func nonNegative(v int64) uint64 {
	if v < 0 {
		return 0
	}
	return uint64(v)
}
