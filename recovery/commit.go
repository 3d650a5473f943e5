package recovery

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// commitLoop makes each batch durable, in order, and delivers its results.
func (p *Processor) commitLoop() {
	// The commit goroutine owns the chunk numbering and the sink size, which
	// depend on encodings it produces.
	st := commitState{nextChunk: p.cp.NextChunk, sinkSize: p.cp.Sink.Size}
	for w := range p.commits {
		err := p.failure()
		if err == nil {
			if cerr := p.commit(w, &st); cerr != nil {
				p.fail(cerr)
				err = p.failure()
			}
		}
		for i, r := range w.reqs {
			e := w.errs[i]
			if err != nil {
				e = err
			}
			r.pending.finish(w.results[i], e)
		}
		w.sinkErr() // the sink writer is done with the batch's bytes
		p.recycle(w)
	}
}

// commit writes the batch in one bbolt transaction: the WAL chunks, output
// records, quarantine and the checkpoint; live output goes out after the
// commit. The sink writer has been writing and fsyncing the batch's output
// bytes since the prepare goroutine handed them over; the transaction waits
// for them before committing, so the output bytes are durable before the
// checkpoint that counts them.
func (p *Processor) commit(w *work, st *commitState) error {
	w.cp.Sink.Size = st.sinkSize + int64(len(w.sinkBytes))
	err := p.db.Update(func(tx *bolt.Tx) error {
		p.releaseMapped(st)
		p.db.Reserve()
		used, err := w.wal.Write(tx, w.cp.NextBatch, st.nextChunk)
		if err != nil {
			return err
		}
		w.cp.NextChunk = st.nextChunk + used
		if err := writeOutput(tx, &w.output); err != nil {
			return err
		}
		if err := writeQuarantine(tx, w.quarantine); err != nil {
			return err
		}
		if err := w.cp.save(tx); err != nil {
			return err
		}
		return w.sinkErr()
	})
	if err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	st.nextChunk, st.sinkSize = w.cp.NextChunk, w.cp.Sink.Size
	p.mu.Lock()
	p.committed = w.cp
	p.status = w.status
	if w.output.count() > 0 {
		close(p.notify)
		p.notify = make(chan struct{})
	}
	p.mu.Unlock()
	if len(w.liveBytes) > 0 {
		if _, err := p.opts.Live.Write(w.liveBytes); err != nil {
			return fmt.Errorf("write live output: %w", err)
		}
	}
	return nil
}

// commitState is what the commit goroutine carries from batch to batch.
type commitState struct {
	nextChunk uint64
	sinkSize  int64
	commits   int
}

// releaseEvery is how many commits pass between releases of the mapped
// file pages: each commit touches a few hundred KiB of them (bbolt reads the
// last leaves of the WAL and the output log to rewrite them), so the
// resident set holds at most a few MiB of them.
const releaseEvery = 16

// releaseMapped drops bbolt's mapped pages from the resident set now and
// then, so that memory follows what is pending rather than the file's size
// (see store.DB.ReleaseMapped). It runs inside the commit's transaction,
// where bbolt cannot remap. A failure costs only memory, so it is logged.
func (p *Processor) releaseMapped(st *commitState) {
	st.commits++
	if st.commits%releaseEvery != 0 {
		return
	}
	if err := p.db.ReleaseMapped(); err != nil && st.commits == releaseEvery {
		p.log.Debug("cannot release mapped pages", "err", err)
	}
}
