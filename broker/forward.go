package broker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// Log is the stored output log a Forwarder reads; *recovery.Processor is
// one.
type Log interface {
	// Output yields the committed records from sequence number from on,
	// blocking for new ones until ctx ends.
	Output(ctx context.Context, from uint64) iter.Seq2[recovery.Record, error]
	// OutputEnd is the sequence number the next record will get.
	OutputEnd() uint64
}

// Default batching of a Forwarder.
const (
	DefaultBatchRecords = 4096
	DefaultBatchBytes   = 1 << 20
	defaultRetryMin     = 100 * time.Millisecond
	defaultRetryMax     = 5 * time.Second
)

// ForwarderOptions configure a Forwarder.
type ForwarderOptions struct {
	// Format is the encoding of each record's value: one JSON message
	// without a line end, or one msgpack message.
	Format cdc.Format
	// DatabaseID is the id of the database whose log is forwarded
	// (store.ID); it goes into every record's HeaderDB and the read-back
	// checks it.
	DatabaseID string
	// Takeover accepts an output whose last record this database did not
	// write, or that is ahead of it, and resumes after that record's
	// sequence number (after 0 when it has none).
	Takeover bool
	// A transaction is closed at the first progress record once it holds
	// BatchRecords records or BatchBytes bytes, or at the last committed
	// record.
	BatchRecords, BatchBytes int
	// RetryMin and RetryMax bound the wait before a new session after a
	// broker error (doubling from RetryMin).
	RetryMin, RetryMax time.Duration
	// Logger receives the sessions and retries; nil means slog.Default().
	Logger *slog.Logger
}

// Forwarder forwards a stored output log to a broker, so that every
// sequence number reaches the output exactly once. Each session fences
// the writers before it, reads back the output's last record S, checks
// that it is byte-identical to stored record S and was written by this
// database, and resumes at S+1. Transactions end at progress records. A
// broker error ends the session and a new one starts after a back-off;
// the stored log buffers the output meanwhile.
//
// Run or Drain one at a time; Acked, Lag and WaitLag are safe from any
// goroutine.
type Forwarder struct {
	log    Log
	out    Output
	o      ForwarderOptions
	writer string

	// Owned by the goroutine running Run or Drain.
	verified bool // a session has verified the output
	seen     Last // the last record on the output as this writer knows it

	mu    sync.Mutex
	acked uint64
	known bool          // a session has read the output back
	moved chan struct{} // closed and replaced when acked moves
}

// NewForwarder returns a Forwarder from log to out.
func NewForwarder(log Log, out Output, o ForwarderOptions) *Forwarder {
	if o.BatchRecords <= 0 {
		o.BatchRecords = DefaultBatchRecords
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.RetryMin <= 0 {
		o.RetryMin = defaultRetryMin
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(defaultRetryMax, o.RetryMin)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	id := make([]byte, 8)
	rand.Read(id)
	return &Forwarder{log: log, out: out, o: o, writer: hex.EncodeToString(id), moved: make(chan struct{})}
}

// Writer returns the id this forwarder writes in HeaderWriter.
func (f *Forwarder) Writer() string { return f.writer }

// Acked returns the sequence number of the last record known to be on the
// output (0 before the first session has read it back).
func (f *Forwarder) Acked() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acked
}

// Position returns Acked, and whether it is known: false until the first
// session has read the output back (Acked is then 0 whatever the output
// holds).
func (f *Forwarder) Position() (acked uint64, known bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acked, f.known
}

// Lag returns how many committed records are not yet known to be on the
// output.
func (f *Forwarder) Lag() uint64 {
	end := f.log.OutputEnd()
	acked := f.Acked()
	if end <= acked+1 {
		return 0
	}
	return end - 1 - acked
}

// WaitLag returns once Lag is at most maxLag, or with ctx's error.
func (f *Forwarder) WaitLag(ctx context.Context, maxLag uint64) error {
	for {
		f.mu.Lock()
		moved := f.moved
		f.mu.Unlock()
		if f.Lag() <= maxLag {
			return nil
		}
		// Output committed after Lag looked only adds lag, so waiting
		// for the output to move is enough; the timer bounds the wait
		// should the log's end have moved back (it never does).
		t := time.NewTimer(time.Second)
		select {
		case <-moved:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}

func (f *Forwarder) setAcked(seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.known = true
	if seq != f.acked {
		f.acked = seq
		close(f.moved)
		f.moved = make(chan struct{})
	}
}

// Run forwards until ctx ends (returning its error) or a fatal error:
// ErrFenced, ErrForeignOutput, ErrOutputAhead, ErrOutputConfig or an
// error marked Fatal. Other errors are logged and retried.
func (f *Forwarder) Run(ctx context.Context) error { return f.run(ctx, 0) }

// Drain forwards every record committed when it is called, then returns
// nil; for forwarding a database that no process is writing to.
func (f *Forwarder) Drain(ctx context.Context) error {
	until := f.log.OutputEnd() - 1
	if until == 0 {
		until = noRecords
	}
	return f.run(ctx, until)
}

// noRecords is the until of a Drain with nothing to forward: it still
// opens a session, to verify the output.
const noRecords = ^uint64(0)

func (f *Forwarder) run(ctx context.Context, until uint64) error {
	wait := f.o.RetryMin
	for {
		before := f.Acked()
		err := f.session(ctx, until)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case IsFatal(err):
			return err
		}
		if f.Acked() != before {
			wait = f.o.RetryMin
		}
		f.o.Logger.Warn("output sink: broker error, starting a new session", "output", f.out.Name(), "err", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, f.o.RetryMax)
	}
}

// session opens the output, verifies it and forwards until until (0:
// forever) or an error.
func (f *Forwarder) session(ctx context.Context, until uint64) error {
	sess, last, err := f.out.Open(ctx, Stamp{DB: f.o.DatabaseID, Writer: f.writer})
	if err != nil {
		return err
	}
	defer sess.Close()
	from, err := f.resume(ctx, last)
	if err != nil {
		return err
	}
	f.setAcked(from - 1)
	if !f.verified {
		f.o.Logger.Info("output sink: verified", "output", f.out.Name(), "resume_at", from)
	}
	f.verified, f.seen = true, last
	if until == noRecords || until > 0 && from > until {
		return nil
	}
	return f.pump(ctx, sess, from, until)
}

// resume checks the output's last record and returns the sequence number
// to go on from.
func (f *Forwarder) resume(ctx context.Context, last Last) (uint64, error) {
	if f.verified {
		if err := f.checkSameWriter(last); err != nil {
			return 0, err
		}
	}
	switch {
	case !last.Found:
		return 1, nil
	case !last.HasSeq:
		if f.o.Takeover {
			f.o.Logger.Warn("output sink: taking over an output whose last record has no sequence number; forwarding from 1", "output", f.out.Name(), "record", last.Where)
			return 1, nil
		}
		return 0, fmt.Errorf("%w: %s: %s has no %s header (rerun with --takeover to forward from record 1 after it)", ErrForeignOutput, f.out.Name(), last.Where, HeaderSeq)
	}
	end := f.log.OutputEnd()
	if last.Seq >= end {
		if f.o.Takeover {
			f.o.Logger.Warn("output sink: taking over an output ahead of this database", "output", f.out.Name(), "output_seq", last.Seq, "database_end", end-1)
			return last.Seq + 1, nil
		}
		return 0, fmt.Errorf("%w: %s: %s is record %d, this database has %d (rerun with --takeover to go on after it)", ErrOutputAhead, f.out.Name(), last.Where, last.Seq, end-1)
	}
	stored, err := f.stored(ctx, last.Seq)
	if err != nil {
		return 0, err
	}
	if why := f.mismatch(last, stored); why != "" {
		if f.o.Takeover {
			f.o.Logger.Warn("output sink: taking over", "output", f.out.Name(), "record", last.Where, "reason", why)
			return last.Seq + 1, nil
		}
		return 0, fmt.Errorf("%w: %s: %s (record %d): %s (rerun with --takeover to go on after it)", ErrForeignOutput, f.out.Name(), last.Where, last.Seq, why)
	}
	return last.Seq + 1, nil
}

// checkSameWriter fails when a record was written since this forwarder's
// last session by another writer: a newer forwarder took over.
func (f *Forwarder) checkSameWriter(last Last) error {
	s := f.seen
	switch {
	case last.Found && last.Writer == f.writer:
		if last.Seq < s.Seq && s.Writer == f.writer {
			return Fatal(fmt.Errorf("%s: output lost records: its last record is %d, this writer had written %d", f.out.Name(), last.Seq, s.Seq))
		}
		return nil
	case last.Found == s.Found && last.Seq == s.Seq && last.Writer == s.Writer:
		return nil // nothing written since
	case !last.Found:
		return Fatal(fmt.Errorf("%s: output lost records: it is empty, and held record %d", f.out.Name(), s.Seq))
	}
	return fmt.Errorf("%w: %s: %s (record %d) was written by writer %s of database %s", ErrFenced, f.out.Name(), last.Where, last.Seq, last.Writer, last.DB)
}

// mismatch says why last is not the stored record, or "".
func (f *Forwarder) mismatch(last Last, stored []byte) string {
	switch {
	case last.DB != f.o.DatabaseID:
		return fmt.Sprintf("written by database %q, this is %q", last.DB, f.o.DatabaseID)
	case !bytes.Equal(last.Value, stored):
		return fmt.Sprintf("its value differs from the stored record (%d bytes on the output, %d stored)", len(last.Value), len(stored))
	}
	return ""
}

// stored returns stored record seq, encoded as forwarded. seq is below
// the log's end, so Output yields it at once.
func (f *Forwarder) stored(ctx context.Context, seq uint64) ([]byte, error) {
	for rec, err := range f.log.Output(ctx, seq) {
		if err != nil {
			return nil, fmt.Errorf("read stored record %d: %w", seq, err)
		}
		if rec.Seq != seq {
			return nil, fmt.Errorf("read stored record %d: got record %d", seq, rec.Seq)
		}
		return f.encode(nil, &rec)
	}
	return nil, fmt.Errorf("read stored record %d: not found", seq)
}

// encode appends rec as a record value. A record msgpack cannot carry
// exactly (see cdc.ErrMsgpackInexact) is a fatal error: sending it would
// merge distinct values, and skipping it would leave a gap.
func (f *Forwarder) encode(dst []byte, rec *recovery.Record) ([]byte, error) {
	if f.o.Format == cdc.Msgpack {
		b, err := cdc.AppendMsgpack(dst, &rec.Msg)
		if err != nil {
			return dst, Fatal(fmt.Errorf("output record %d: %w", rec.Seq, err))
		}
		return b, nil
	}
	return cdc.AppendJSON(dst, &rec.Msg), nil
}

// pump forwards records from from on, one transaction per batch.
func (f *Forwarder) pump(ctx context.Context, sess Session, from, until uint64) error {
	var (
		slab []byte
		ends []int
		seqs []uint64
		outs []Outgoing
	)
	flush := func() error {
		outs = outs[:0]
		start := 0
		for i, end := range ends {
			outs = append(outs, Outgoing{Seq: seqs[i], Value: slab[start:end]})
			start = end
		}
		if err := sess.Write(ctx, outs); err != nil {
			return err
		}
		last := seqs[len(seqs)-1]
		f.setAcked(last)
		f.seen = Last{Found: true, Seq: last, HasSeq: true, DB: f.o.DatabaseID, Writer: f.writer}
		slab, ends, seqs = slab[:0], ends[:0], seqs[:0]
		return nil
	}
	for rec, err := range f.log.Output(ctx, from) {
		if err != nil {
			if errors.Is(err, recovery.ErrClosed) {
				return Fatal(err)
			}
			return err
		}
		if slab, err = f.encode(slab, &rec); err != nil {
			return err
		}
		ends, seqs = append(ends, len(slab)), append(seqs, rec.Seq)
		done := until > 0 && rec.Seq >= until
		if rec.Msg.Kind != cdc.KindProgress && !done {
			continue
		}
		if done || len(seqs) >= f.o.BatchRecords || len(slab) >= f.o.BatchBytes || rec.Seq+1 >= f.log.OutputEnd() {
			if err := flush(); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
	}
	return ctx.Err()
}
