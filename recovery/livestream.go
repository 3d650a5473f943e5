package recovery

import (
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	bolt "go.etcd.io/bbolt"
)

// The live output (Options.Live) is a stream: stdout, a pipe, a device. It
// cannot be read back or cut, so it is written at least once: each batch's
// output goes to it once the batch has committed, and the checkpoint keeps
// LiveNext, the first record not known to have been written to it (each
// commit records how far the writes of the batches before it got; Close
// records the last). A run with a stream first writes the records from
// LiveNext on: those a run before it committed but may not have written
// before it stopped. A run without a stream owes none (it moves LiveNext
// with its commits), so a stream receives the records committed while one
// is attached, some of them twice after a crash.

// catchUpLive writes to the stream the committed records an earlier run
// may not have written to its own.
func (p *Processor) catchUpLive() error {
	cp := &p.cp
	if cp.LiveNext == 0 || cp.LiveNext > cp.NextOutput {
		// A database from before LiveNext: nothing known to be owed.
		cp.LiveNext = cp.NextOutput
	}
	from := cp.LiveNext
	var buf []byte
	for cp.LiveNext < cp.NextOutput {
		next := cp.LiveNext
		buf = buf[:0]
		err := p.db.View(func(tx *bolt.Tx) error {
			return scanOutput(tx, next, func(seq uint64, m *cdc.Message) (bool, error) {
				if seq != next || seq >= cp.NextOutput {
					return false, nil
				}
				var err error
				if buf, err = cdc.AppendMessage(buf, p.opts.LiveFormat, m); err != nil {
					return false, fmt.Errorf("output record %d: %w", seq, err)
				}
				next++
				return len(buf) < 1<<20, nil
			})
		})
		if err == nil && next == cp.LiveNext {
			err = fmt.Errorf("%w: the output log lacks record %d", ErrInconsistent, next)
		}
		if err != nil {
			return fmt.Errorf("catch up the output stream: %w", err)
		}
		if _, err := p.opts.Live.Write(buf); err != nil {
			return p.liveError(err, cp.LiveNext)
		}
		cp.LiveNext = next
	}
	if cp.LiveNext > from {
		p.log.Info("output stream: wrote again the records an interrupted run committed", "from", from, "records", cp.LiveNext-from)
	}
	return nil
}

// writeLive writes a committed batch's output to the stream.
func (p *Processor) writeLive(w *work, st *commitState) error {
	if p.opts.Live == nil {
		return nil
	}
	if len(w.liveBytes) > 0 {
		if _, err := p.opts.Live.Write(w.liveBytes); err != nil {
			return p.liveError(err, st.liveNext)
		}
	}
	st.liveNext = w.cp.NextOutput
	p.mu.Lock()
	p.liveNext = st.liveNext
	p.mu.Unlock()
	return nil
}

// liveError describes a failed write to the stream, from record from on.
func (p *Processor) liveError(err error, from uint64) error {
	return fmt.Errorf("%w: %w; the records from %d on are committed in the database ('cdclog replay --db %s --from-seq %d' writes them)",
		ErrLiveOutput, err, from, p.db.Path(), from)
}

// saveOnClose commits, at a clean Close, how far the stream was written
// and, with an output file, how far its bytes are durable (every record by
// now), with a Limit equal to its size: no batch is in flight any more, so
// a later Open finds any byte past the committed size to be another
// program's, and refuses to cut it.
func (p *Processor) saveOnClose() error {
	p.mu.Lock()
	cp := p.committed.clone()
	next := p.liveNext
	p.mu.Unlock()
	changed := false
	if p.opts.Live != nil && cp.LiveNext < next {
		cp.LiveNext, changed = next, true
	}
	if p.opts.Sink != nil {
		var at sinkMark
		p.sinkw.durableMark(&at)
		before := cp.Sink
		at.stamp(&cp.Sink)
		cp.Sink.Limit = cp.Sink.Size
		changed = changed || cp.Sink.Limit != before.Limit || cp.Sink.Size != before.Size || cp.Sink.Next != before.Next
	}
	if !changed {
		return nil
	}
	if err := p.db.Update(func(tx *bolt.Tx) error { return cp.save(tx) }); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}
