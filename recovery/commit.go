package recovery

import (
	"context"
	"fmt"
	"time"

	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// commitLoop makes each batch durable, in order, and delivers its results;
// between two batches it runs the maintenance writes (see maintain). It
// owns st: the chunk numbering, the output file's state, which depend on
// encodings it produces, and the floors gc has set.
func (p *Processor) commitLoop(st commitState) {
	for {
		select {
		case w, ok := <-p.commits:
			if !ok {
				return
			}
			p.commitWork(w, &st)
		case op := <-p.maint:
			op.done <- p.runMaintenance(op, &st)
		}
	}
}

// commitWork commits one batch and delivers its results.
func (p *Processor) commitWork(w *work, st *commitState) {
	err := p.failure()
	if err == nil {
		var start time.Time
		var written time.Duration
		if p.opts.Observer != nil {
			start, written = p.observeStart()
		}
		if cerr := p.commit(w, st); cerr != nil {
			p.fail(cerr)
			err = p.failure()
		} else if p.opts.Observer != nil {
			p.observeCommit(w, start, written)
		}
	}
	if err != nil {
		p.pending.abandon() // the requests' messages are theirs again
	}
	for i, r := range w.reqs {
		res := r.sofar
		res.Add(w.results[i])
		if res.Rejected == nil {
			res.Rejected = w.results[i].Rejected
		}
		if w.split && i == len(w.reqs)-1 {
			// It goes on in the next batch, which delivers the sum, or
			// the failure that stopped this one.
			if err == nil {
				r.sofar = res
			}
			continue
		}
		e := w.errs[i]
		if err != nil {
			// Only the parts committed before count.
			res, e = r.sofar, err
		}
		r.pending.finish(res, e)
	}
	p.recycle(w)
}

// commit writes the batch in one bbolt transaction: the WAL chunks, output
// records, quarantine and the checkpoint, which records how far the output
// file's fsyncs have got. Once it has committed, the batch's output goes to
// the output file (whose writer fsyncs it while the next batch commits)
// and to the stream, so both only ever receive committed records.
func (p *Processor) commit(w *work, st *commitState) error {
	if p.opts.Sink != nil {
		p.stampSink(w, st)
	}
	if p.opts.Live != nil {
		w.cp.LiveNext = st.liveNext
	}
	firstChunk := st.nextChunk
	// The floors are the commit goroutine's: gc moves them between
	// batches, after the apply goroutine cloned this batch's checkpoint.
	w.cp.WALFloor, w.cp.OutputFloor = st.walFloor, st.outputFloor
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
		if err := st.marks.mark(tx, &w.output); err != nil {
			return err
		}
		if err := writeQuarantine(tx, w.quarantine); err != nil {
			return err
		}
		return w.cp.save(tx)
	})
	if err != nil {
		return fmt.Errorf("commit batch: %w", err)
	}
	st.wal = st.wal.Plus(w.wal.Written())
	p.pending.committed(w.cp.NextBatch, &w.wal, firstChunk)
	st.nextChunk = w.cp.NextChunk
	p.mu.Lock()
	p.committed = w.cp
	p.status = w.status
	p.walStats = st.wal
	if w.output.count() > 0 {
		close(p.notify)
		p.notify = make(chan struct{})
	}
	p.mu.Unlock()
	if err := p.sinkw.write(w.sinkBytes, w.cp.NextOutput, w.sinkChain); err != nil {
		// The batch has committed: its requests succeed, and the file
		// receives its records when the database is opened again, or,
		// when another program changed it, by replay.
		if changedOutside(err) {
			err = fmt.Errorf("%w; %s", err, p.regenerate())
		}
		p.fail(err)
	}
	return p.writeLive(w, st)
}

// commitState is what the commit goroutine carries from batch to batch.
type commitState struct {
	nextChunk uint64
	// sinkAt is where the output file's durable bytes end, as the last
	// commit recorded it.
	sinkAt sinkMark
	// liveNext is the first record not yet written to Options.Live.
	liveNext uint64
	commits  int
	// walFloor and outputFloor are the checkpoint's WALFloor and
	// OutputFloor: Processor.GC moves them.
	walFloor, outputFloor uint64
	// marks writes the output log's time marks (see timeMarks in retention.go).
	marks timeMarks
	// wal is the WAL's figures as of the last commit: read once at Open,
	// then each batch adds what it wrote and gc takes off what it deleted,
	// so that they stay what wal.Log.ReadStats would read.
	wal wal.Stats
}

// stampSink sets the batch checkpoint's output file state to what the
// sink writer has made durable: the file receives a batch's bytes only
// after the batch commits, so a commit records the output of the batches
// before it, as far as their fsync has got.
func (p *Processor) stampSink(w *work, st *commitState) {
	p.sinkw.durableMark(&st.sinkAt)
	st.sinkAt.stamp(&w.cp.Sink)
	w.cp.Sink.Limit = w.cp.Sink.Size + sinkAllowance
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

// The commit goroutine is the database's one writer while a processor
// runs: besides the batches it runs the other writes (a consumer's
// position, the deletion of a consumer, gc), each in a transaction of its
// own between two batches. So they see the checkpoint of the last commit
// as it is in the database, never race a batch for the checkpoint (whose
// floors the commit goroutine stamps on every batch), and are ordered
// with one another: a consumer cannot seek below the output floor that a
// gc running at the same moment sets.

// maintenance is one such write: fn runs inside the transaction, and
// after, when set, on the commit goroutine once it has committed.
type maintenance struct {
	fn    func(tx *bolt.Tx, st *commitState) error
	after func(st *commitState)
	done  chan error
}

// maintain runs a write on the commit goroutine and returns its error. The
// caller has entered (see enter), so the goroutine runs until the write is
// done. Once handed over, the write runs to its end even if ctx ends.
func (p *Processor) maintain(ctx context.Context, fn func(*bolt.Tx, *commitState) error, after func(*commitState)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m := &maintenance{fn: fn, after: after, done: make(chan error, 1)}
	select {
	case p.maint <- m:
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-m.done
}

// runMaintenance runs m on the commit goroutine. A failed write is
// returned to its caller and does not stop the processor: it changed
// nothing (bbolt rolled it back), and the batches' commits do not depend
// on it.
func (p *Processor) runMaintenance(m *maintenance, st *commitState) error {
	if err := p.failure(); err != nil {
		return err
	}
	if err := p.db.Update(func(tx *bolt.Tx) error { return m.fn(tx, st) }); err != nil {
		return err
	}
	if m.after != nil {
		m.after(st)
	}
	return nil
}

// lastCommitted returns a copy of the checkpoint of the last commit. On
// the commit goroutine it is the checkpoint in the database.
func (p *Processor) lastCommitted() checkpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.committed.clone()
}

// saveCommitted writes cp, the last committed checkpoint changed by a
// maintenance write, and makes it the last committed one once tx
// commits (see publish).
func saveCommitted(tx *bolt.Tx, cp *checkpoint) error {
	if err := cp.save(tx); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

// publish makes cp the last committed checkpoint and ws the WAL's
// figures, after the maintenance write that saved it committed.
func (p *Processor) publish(cp checkpoint, ws wal.Stats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.committed = cp
	p.walStats = ws
}
