package recovery

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/wal"
)

// work is one group commit on its way through the pipeline: filled by the
// apply goroutine (the receiver's results), encoded by the prepare
// goroutine (WAL chunks, output log records, output bytes) and written by
// the commit goroutine, which delivers the results once it is durable.
type work struct {
	reqs    []*request
	results []Result
	errs    []error
	// split is set when the last request goes on in the next batch: its
	// results are added to its sofar at the commit, not delivered.
	split bool
	// msgs counts the messages and rejects of the requests that this
	// batch applied (of a split request, its part), for the Observer.
	msgs int

	// accepted are the messages the receiver accepted, numbered from
	// firstArrival; the prepare goroutine encodes them into wal.
	accepted     []accepted
	firstArrival uint64
	wal          wal.Batch
	// out is the batch's output, rendered by the prepare goroutine into
	// the output log and the sinks (the receiver never reuses emitted
	// messages).
	out       []cdc.Message
	output    outputRecords
	sinkBytes []byte
	liveBytes []byte
	// sinkChain is the output stream's chain after the batch's records.
	sinkChain  streamChain
	quarantine []QuarantineRecord
	cp         checkpoint
	status     receiverState
}

// applyLoop gathers requests into batches, runs them through the receiver
// and hands each batch to the prepare goroutine. A release owed at the
// open (a checkpoint taken part-way through one) goes on at once.
func (p *Processor) applyLoop() {
	defer close(p.prepared)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	if p.recv.Releasing() {
		p.runBatches(nil)
		p.drain()
	}
	close(p.resumed)
	for first := range p.requests {
		p.awaitWork()
		p.runBatches(p.collect(first, timer))
	}
}

// awaitWork waits until one of the fixed set of works is idle, before the
// batch is gathered rather than after: while the pipeline is busy, the
// requests that arrive join the batch that waits for it, so batches grow
// when commits are the bottleneck (group commit) instead of going round
// at the size the first BatchDelay allowed. On the first 4M messages of
// the seed-like stream, at load 15, that took 220 batches (42 of them
// full, 66 of 8K messages or fewer) down to 190 (63 full, 41): fewer
// commits and fsyncs for the same messages. It adds no wait: newWork
// waits for the same work just after.
func (p *Processor) awaitWork() {
	w := <-p.works
	p.works <- w // never blocks: the channel holds every work
}

// runBatches applies reqs in batches: a batch whose output passes its
// bound ends there, and what is left of its requests makes the next one;
// a release owed once they are done goes on in batches of no request.
func (p *Processor) runBatches(reqs []*request) {
	for len(reqs) > 0 || p.owesRelease() {
		w := p.newWork(reqs)
		reqs = nil
		if err := p.failure(); err != nil {
			for i := range w.errs {
				w.errs[i] = err
			}
		} else {
			reqs = p.apply(w)
		}
		p.prepared <- w
		if p.failure() == nil && p.recv.NeedShed() {
			// The store, the WAL, must hold everything the receiver
			// drops: wait until every batch applied has committed.
			p.drain()
			if err := p.shedIfNeeded(); err != nil {
				p.fail(err)
			}
		}
	}
}

// owesRelease reports whether the receiver is part-way through a release
// that a batch can go on with.
func (p *Processor) owesRelease() bool { return p.failure() == nil && p.recv.Releasing() }

// continueRelease appends to out (of about outBytes bytes) the release
// the receiver owes, part by part (each within its output limit, see
// demangle.Receiver.SetOutputLimit), until it is done or the batch's
// output is full: then full is set, and the rest goes on in the next
// batch. The checkpoint records how far it got (Releasing, Released), so
// a restart owes the same rest. storeErr says the pending state on disk
// failed, and with it the processor.
func (p *Processor) continueRelease(out []cdc.Message, outBytes int, res *Result) (_ []cdc.Message, _ int, full, storeErr bool) {
	for p.recv.Releasing() {
		if p.outputFull(len(out), outBytes) {
			return out, outBytes, true, false
		}
		before := len(out)
		var err error
		out, err = p.recv.Continue(out)
		outBytes += msgBytes(out[before:])
		if res != nil {
			res.Output += len(out) - before
		}
		if err != nil {
			p.fail(fmt.Errorf("the pending state on disk: %w", err))
			return out, outBytes, true, true
		}
	}
	return out, outBytes, false, false
}

// outputFull reports whether a batch's output of n records and about size
// bytes (their data and 8 bytes each) has reached its bound: twice the
// input's, so that an ordinary batch, which releases about what it
// reads, is never cut, while progress that releases many held times at
// once is committed in batches of bounded memory.
func (p *Processor) outputFull(n, size int) bool {
	return n >= 2*p.opts.BatchMessages || size >= 2*p.opts.BatchBytes
}

// drain waits until every work is idle: every batch applied so far has
// committed (or failed).
func (p *Processor) drain() {
	ws := make([]*work, 0, workCount)
	for range workCount {
		ws = append(ws, <-p.works)
	}
	for _, w := range ws {
		p.works <- w
	}
}

// shedIfNeeded moves what the receiver holds beyond its budget out of
// memory; everything it holds must be committed (see demangle Shed).
func (p *Processor) shedIfNeeded() error {
	if !p.recv.NeedShed() {
		return nil
	}
	before := p.recv.MemoryBytes()
	if err := p.recv.Shed(); err != nil {
		return fmt.Errorf("the pending state on disk: %w", err)
	}
	h, _ := p.recv.Horizon()
	p.log.Debug("pending state shed to disk", "horizon", h, "memory_before", before, "memory_after", p.recv.MemoryBytes(),
		"chunks", p.pending.chunkCount())
	return nil
}

// stampPending records the receiver's horizon in cp.
func (p *Processor) stampPending(cp *checkpoint) { cp.setHorizon(p.recv.HorizonState()) }

// newWork returns a work for reqs, waiting for one of the fixed set of
// works to be recycled.
func (p *Processor) newWork(reqs []*request) *work {
	w := <-p.works
	w.reqs, w.split, w.msgs = reqs, false, 0
	w.results = append(w.results[:0], make([]Result, len(reqs))...)
	w.errs = append(w.errs[:0], make([]error, len(reqs))...)
	return w
}

// recycle keeps a delivered work's buffers for a later batch, dropping its
// references to requests. The output and accepted messages are not
// cleared: each element is overwritten before it is read again, what the
// stale ones refer to (a few data blocks) is bounded by the buffers' size,
// and clearing them cost 1.4% of ingest's CPU.
func (p *Processor) recycle(w *work) {
	clear(w.reqs)
	clear(w.errs)
	w.wal.Reset()
	w.output.reset(0)
	// A batch that released a big time grew its buffers far past what
	// batches need: let them go rather than keep them to the end.
	keep := 4 * p.opts.BatchBytes
	if w.wal.Cap() > keep {
		w.wal = wal.Batch{}
	}
	if w.output.size() > keep {
		w.output = outputRecords{}
	}
	*w = work{
		results: w.results[:0], errs: w.errs[:0], out: shrink(w.out, keep/64), wal: w.wal, output: w.output,
		accepted: w.accepted[:0], sinkBytes: shrink(w.sinkBytes, keep), liveBytes: shrink(w.liveBytes, keep),
	}
	p.works <- w // never blocks: the channel holds every work
}

// shrink returns s emptied, or nil when its capacity passes n.
func shrink[T any](s []T, n int) []T {
	if cap(s) > n {
		return nil
	}
	return s[:0]
}

// collect gathers requests after first until the batch holds
// BatchMessages messages or BatchBytes bytes of them (see msgBytes),
// BatchDelay has passed since first arrived, or a request asks to be
// flushed.
func (p *Processor) collect(first *request, timer *time.Timer) []*request {
	reqs := []*request{first}
	n, size := len(first.Msgs), msgBytes(first.Msgs)
	if first.Flush {
		return reqs
	}
	timer.Reset(p.opts.BatchDelay)
	defer timer.Stop()
	for n < p.opts.BatchMessages && size < p.opts.BatchBytes {
		select {
		case r, ok := <-p.requests:
			if !ok {
				return reqs
			}
			reqs = append(reqs, r)
			n += len(r.Msgs)
			size += msgBytes(r.Msgs)
			if r.Flush {
				return reqs
			}
		case <-timer.C:
			return reqs
		}
	}
	return reqs
}

// msgBytes is about what msgs take in a batch's buffers beyond what a
// message of any size does: an update its data and 8 bytes, a statement
// 16 a count.
func msgBytes(msgs []cdc.Message) int {
	n := 0
	for i := range msgs {
		switch m := &msgs[i]; m.Kind {
		case cdc.KindUpdate:
			n += len(m.Update.Data) + 8
		default:
			n += 16 * len(m.Progress.Counts)
		}
	}
	return n
}

// apply pushes the requests of w through the receiver and fills w. When
// the output passes its bound (outputFull) before the end, w ends there and
// apply returns the requests left, the one it stopped in first (its next
// message set): they make the next batch. A request so split commits its
// cursor and delivers its result with its last part; a crash in between
// reads it again, and the receiver finds its first part already applied.
func (p *Processor) apply(w *work) (rest []*request) {
	w.output.reset(p.cp.NextOutput)
	w.firstArrival = p.cp.NextArrival
	p.pending.begin(p.cp.NextBatch + 1) // the number its WAL chunks carry
	out := w.out
	outBytes := 0
	for i, r := range w.reqs {
		full := i > 0 && p.outputFull(len(out), outBytes)
		if !full && p.recv.Releasing() {
			// A release owed goes out before the request is applied. It
			// is the request's own when an earlier batch applied part of
			// it (else it was owed at the open), and counts in its Output.
			var owner *Result
			if r.next > 0 {
				owner = &w.results[i]
			}
			var storeErr bool
			if out, outBytes, full, storeErr = p.continueRelease(out, outBytes, owner); storeErr {
				return nil
			}
			if full && owner != nil {
				// Still owed: this part counts in the request's sofar.
				rest = w.endAt(i, true)
				break
			}
		}
		if full {
			rest = w.endAt(i, false)
			break
		}
		if r.next == 0 && r.CursorCheck && !bytes.Equal(p.cp.Cursors[r.Cursor], r.CursorPrev) {
			w.errs[i] = fmt.Errorf("%w: cursor %s", ErrCursorMoved, r.Cursor)
			w.msgs += len(r.Msgs) + len(r.Rejects)
			continue
		}
		var done, storeErr bool
		start := r.next
		out, outBytes, done, storeErr = p.applyMsgs(w, i, out, outBytes)
		if storeErr {
			return nil // the processor failed: the batch does not commit
		}
		if !done {
			w.msgs += r.next - start
			rest = w.endAt(i, true)
			break
		}
		w.msgs += len(r.Msgs) - start + len(r.Rejects)
		p.rejectsBefore(w, i, math.MaxInt) // those after the last message, or after an error
		if w.errs[i] == nil && r.Cursor != "" {
			if p.cp.Cursors == nil {
				p.cp.Cursors = map[string][]byte{}
			}
			p.cp.Cursors[r.Cursor] = append([]byte(nil), r.CursorValue...)
		}
	}
	if len(rest) == 0 && p.recv.Releasing() {
		var storeErr bool
		if out, _, _, storeErr = p.continueRelease(out, outBytes, nil); storeErr {
			return nil
		}
	}
	w.out = out
	p.cp.NextOutput += uint64(len(out))
	if p.opts.Live == nil {
		p.cp.LiveNext = p.cp.NextOutput // no stream is owed these
	}
	p.cp.Frontier, p.cp.Done = p.recv.Frontier()
	p.cp.Stats = p.recv.Stats()
	p.stampPending(&p.cp)
	p.cp.NextBatch++
	w.cp = p.cp.clone()
	w.sinkChain = streamChain{at: true, frontier: p.cp.Frontier, done: p.cp.Done}
	w.status = captureReceiver(p.recv)
	return rest
}

// endAt ends w at its request i and returns the requests from i on, for
// the next batch (a copy: recycle clears w.reqs while the next batch
// runs). With split, request i, part of it applied in w, stays in w too:
// it goes on in the next batch, which delivers its result (w.split).
func (w *work) endAt(i int, split bool) (rest []*request) {
	rest = slices.Clone(w.reqs[i:])
	n := i
	if split {
		n = i + 1
	}
	w.reqs, w.results, w.errs, w.split = w.reqs[:n], w.results[:n], w.errs[:n], split
	return rest
}

// applyMsgs pushes the messages of request i of w from its next one,
// appending what they release to out (of about outBytes bytes). It returns
// done false, with the request's next message set, when the output passed
// its bound before the request's end; its first message is always applied,
// so that every batch makes progress. storeErr says the pending state on
// disk failed, and with it the processor.
func (p *Processor) applyMsgs(w *work, i int, out []cdc.Message, outBytes int) (_ []cdc.Message, _ int, done, storeErr bool) {
	r, res := w.reqs[i], &w.results[i]
	logSource := uint64(0)
	if r.LogSource != "" {
		logSource = p.cp.source(r.LogSource)
	}
	for j := r.next; j < len(r.Msgs); j++ {
		if j > r.next && p.outputFull(len(out), outBytes) {
			r.next = j
			return out, outBytes, false, false
		}
		p.rejectsBefore(w, i, j)
		m := &r.Msgs[j]
		var at cdc.Pos
		if r.Pos != nil && j < len(r.Pos) {
			at = r.Pos[j]
		}
		before := len(out)
		var o demangle.Outcome
		var err error
		out, o, err = p.push(out, m, at)
		if err != nil && errors.Is(err, demangle.ErrStore) { // no call for the commonest case
			p.fail(fmt.Errorf("the pending state on disk: %w", err))
			return out, outBytes, true, true
		}
		res.Output += len(out) - before
		outBytes += msgBytes(out[before:])
		if o == demangle.Accepted {
			// Also a statement with some claims rejected (err set):
			// its other claims are held, so it is logged.
			res.Accepted++
			src := logSource
			if r.LogSource == "" {
				src = p.cp.source(at.Source)
			}
			w.accepted = append(w.accepted, accepted{m: m, source: src,
				line: nonNegative(at.Line), offset: nonNegative(at.Offset)})
			p.cp.NextArrival++
		}
		if err != nil {
			if p.opts.OnError == cdc.Fail {
				w.errs[i] = err
				break
			}
			p.setAside(w, res, at, m, err)
		}
		res.Applied++
		switch o {
		case demangle.Duplicate:
			res.Duplicates++
		case demangle.Stale:
			res.Stale++
		}
		if d := p.recv.Deferred(); len(d) > 0 { // rare: no call per message
			if v := p.deferred(w, res, d); v != nil {
				w.errs[i] = v
				break
			}
		}
		if p.recv.Releasing() {
			// The message released more than the bound: the rest goes
			// out in the batches after, the request with its last part.
			var full, storeErr bool
			if out, outBytes, full, storeErr = p.continueRelease(out, outBytes, res); storeErr {
				return out, outBytes, true, true
			} else if full {
				r.next = j + 1
				return out, outBytes, false, false
			}
		}
	}
	if w.errs[i] != nil && p.recv.Releasing() {
		// A request stopped by an error is delivered once what it
		// released is committed, like any other: it goes on, applying
		// nothing more, until the release is done.
		var full, storeErr bool
		if out, outBytes, full, storeErr = p.continueRelease(out, outBytes, res); storeErr {
			return out, outBytes, true, true
		} else if full {
			r.stopped, r.next = w.errs[i], len(r.Msgs)
			return out, outBytes, false, false
		}
	}
	if r.stopped != nil {
		w.errs[i] = r.stopped
	}
	return out, outBytes, true, false
}

// push runs m through the receiver. When an output is written as msgpack,
// it first refuses an update whose data msgpack cannot carry exactly
// (cdc.ErrMsgpackInexact), like a message that breaks the protocol: once
// accepted, its release could not be written.
func (p *Processor) push(out []cdc.Message, m *cdc.Message, at cdc.Pos) ([]cdc.Message, demangle.Outcome, error) {
	if p.msgpackOut && m.Kind == cdc.KindUpdate {
		if err := cdc.CheckMsgpack(m); err != nil {
			return out, 0, fmt.Errorf("%s: %w", at, err)
		}
	}
	return p.recv.Push(out, m, at)
}

// deferred applies the policy to ds, the violations found in messages the
// receiver took back from beyond its horizon during the last push (see
// demangle.Receiver.Deferred): messages accepted earlier, now dropped.
// Under policy Fail it returns the first, which stops the request (the
// message that made the receiver load them was applied), and logs the
// others, which a rerun would not report again.
func (p *Processor) deferred(w *work, res *Result, ds []*demangle.ViolationError) *demangle.ViolationError {
	var first *demangle.ViolationError
	for _, v := range ds {
		switch {
		case p.opts.OnError != cdc.Fail:
			p.setAside(w, res, v.At, &v.Msg, v)
		case first == nil:
			first = v
		default:
			p.log.Warn("protocol violation", "error", v.Error())
		}
	}
	return first
}

// rejectsBefore sets aside, in order, request i's Rejects not set aside
// yet whose Index is at most j: those that came before its message j.
func (p *Processor) rejectsBefore(w *work, i, j int) {
	r := w.reqs[i]
	for ; r.nextReject < len(r.Rejects) && r.Rejects[r.nextReject].Index <= j; r.nextReject++ {
		p.reject(w, &w.results[i], &r.Rejects[r.nextReject])
	}
}

// setAside applies policy Skip or Quarantine to a rejected message.
func (p *Processor) setAside(w *work, res *Result, at cdc.Pos, m *cdc.Message, err error) {
	rj := demangle.RejectOf(m, at, err)
	p.reject(w, res, &rj)
}

// reject counts or quarantines refused input, by policy.
func (p *Processor) reject(w *work, res *Result, rj *cdc.Reject) {
	if res.Rejected == nil {
		res.Rejected = &cdc.Reject{Pos: rj.Pos, Reason: rj.Reason, Truncated: rj.Truncated}
	}
	if p.opts.OnError == cdc.Quarantine {
		seen, err := p.quarantinedBefore(rj)
		if err != nil {
			p.fail(fmt.Errorf("read the quarantine: %w", err))
		}
		if seen {
			p.log.Debug("input quarantined before, not again", "error", rj.String())
			return
		}
		// A copy of the raw bytes: they are written at the commit, after
		// the request's slices go back to the source (see Pending.release).
		q := *rj
		q.Raw = bytes.Clone(rj.Raw)
		w.quarantine = append(w.quarantine, QuarantineRecord{
			Seq: p.cp.NextQuarantine, Time: time.Now().UTC(), Reject: q,
		})
		p.cp.NextQuarantine++
		p.cp.Quarantined++
		res.Quarantined++
		return
	}
	p.cp.Skipped++
	res.Skipped++
	p.log.Warn("rejected input", "error", rj.String())
}

func nonNegative(v int64) uint64 {
	if v < 0 {
		return 0
	}
	return uint64(v)
}
