package recovery

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/cdclog/cdclog/cdc"
)

// Default limits of one read from a Source (see IngestOptions).
const (
	DefaultReadMessages = 4096
	DefaultReadBytes    = 1 << 20
	DefaultInFlight     = 16
)

// IngestOptions configure Processor.Ingest. The zero value works.
type IngestOptions struct {
	// ReadMessages bounds the messages (and rejects) of one read from the
	// source: 0 means DefaultReadMessages, and never more than the
	// processor's BatchMessages, so that a group commit of N messages
	// means what it says.
	ReadMessages int
	// ReadBytes bounds the input bytes of one read (for a source that
	// counts them): 0 means DefaultReadBytes. With InFlight it bounds the
	// input held before its commit, at most about twice InFlight reads (a
	// read's buffer is reused once its batch is encoded, before the
	// commit): 32 MiB by default, whatever the size of the messages
	// (4,096 ordinary messages are far less).
	ReadBytes int
	// InFlight bounds the read buffers, so that decoding, the receiver
	// and the commits overlap: 0 means DefaultInFlight. A buffer is
	// reused once its batch is encoded for the WAL; the reads waiting for
	// their commit are bounded by InFlight too.
	InFlight int
	// OnRead, when set, is called on Ingest's goroutine after each read
	// from the source, with the batch read (before it is submitted; it
	// must not keep or change it).
	OnRead func(*SourceBatch)
}

func (o IngestOptions) withDefaults(p *Processor) IngestOptions {
	if o.ReadMessages <= 0 {
		o.ReadMessages = DefaultReadMessages
	}
	o.ReadMessages = min(o.ReadMessages, p.opts.BatchMessages)
	if o.ReadBytes <= 0 {
		o.ReadBytes = DefaultReadBytes
	}
	if o.InFlight <= 0 {
		o.InFlight = DefaultInFlight
	}
	return o
}

// IngestResult is what Ingest did: the messages it read, and what became
// of those that were committed.
type IngestResult struct {
	// Read counts the messages and rejects read from the source.
	Read uint64
	// Committed sums the Results of the committed requests; messages read
	// but not committed (after an error) are not in it.
	Committed Result
}

// Ingest reads src until it ends and commits what it reads, each batch in
// one transaction with the source's position (its cursor, under
// src.Name()), so that an Ingest of the same source after a crash or a
// stop resumes just after what was committed. It returns nil once the
// source has ended (io.EOF) and everything read is committed.
//
// Ingest is how a service reads a feed: a batch is submitted as soon as
// the source has no more input at once, so a producer that pauses has
// what it wrote committed and released within Options.BatchDelay; the
// last batch of a finished input is committed without that delay.
//
// When ctx ends, or Close begins, Ingest stops reading, commits what it
// has read and returns ctx's error (ErrClosed for Close). Under policy
// Fail it returns the first error that stopped the input or a request (a
// *cdc.DecodeError, a *demangle.ViolationError, ErrFailed, the source's
// own error, as it is) once everything before it is
// committed; the requests read after it are not applied, and their
// positions are not committed. A processor that fails while the source
// waits for input (its output file or stream failed after a commit, for
// another Ingest, or for an Append) stops the reads too: Ingest returns
// the failure (Err) at once rather than when the next input comes.
// Several Ingests, of different sources, may run at once, with Submit
// and Append besides.
func (p *Processor) Ingest(ctx context.Context, src Source, o IngestOptions) (IngestResult, error) {
	if err := p.enter(); err != nil {
		return IngestResult{}, err
	}
	defer p.leave()
	o = o.withDefaults(p)
	// The reads stop when ctx ends, Close begins, or a request fails;
	// the commits go on until everything read is in.
	rctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() {
		select {
		case <-p.closing:
			stop(ErrClosed)
		case <-p.stopped:
			// A failure that no request of this Ingest met (the
			// output file's, while the source waits for input).
			stop(p.failure())
		case <-rctx.Done():
		}
	}()
	name := src.Name()
	var cursor []byte
	if name != "" {
		cursor = p.Cursor(name)
	}
	if err := src.Start(rctx, cursor); err != nil {
		src.Close()
		return IngestResult{}, err
	}
	run := &ingestRun{p: p, src: src, o: o, stop: stop, prev: cursor,
		free:   make(chan *SourceBatch, o.InFlight),
		flight: make(chan ingestFlight, o.InFlight), waiting: make(chan ingestFlight, o.InFlight)}
	for range o.InFlight {
		run.free <- &SourceBatch{}
	}
	collected := make(chan struct{})
	go run.recycle()
	go func() { run.collect(); close(collected) }()
	readErr := run.read(rctx)
	close(run.flight)
	<-collected
	if err := src.Close(); err != nil && readErr == nil && run.failed == nil {
		readErr = err
	}
	return run.res, run.outcome(ctx, rctx, readErr)
}

// ingestRun is one Ingest: its reading loop (on Ingest's goroutine); the
// recycler, which hands each batch back to it as soon as the processor has
// encoded the batch's request (its WAL bytes are the processor's own),
// well before the commit; and the collector of results, which waits for
// the commits. A read buffer so waits for the apply and encoding of its
// batch, not for the fsyncs: holding it until the commit kept the reads
// waiting for a free buffer for 60% of an ingest of a 16M-message file.
type ingestRun struct {
	p    *Processor
	src  Source
	o    IngestOptions
	stop context.CancelCauseFunc
	prev []byte // the cursor value the next request expects (a copy)

	free    chan *SourceBatch // batches ready to be read into
	flight  chan ingestFlight // submitted, in order (to the recycler)
	waiting chan ingestFlight // recycled, waiting for their commit (to the collector)
	res     IngestResult      // the collector's, read after it ends
	failed  error             // the first request error (the collector's)
}

// ingestFlight is a submitted batch: its buffers, its request, and its
// cursor (a copy, acknowledged once committed).
type ingestFlight struct {
	b      *SourceBatch
	w      *Pending
	cursor []byte
}

// read reads batches and submits them until the source ends or fails, or
// rctx ends (the source then returns what it holds).
func (r *ingestRun) read(rctx context.Context) error {
	for {
		// Even once rctx has ended, the source is read until it says so:
		// it hands over what it has already taken from its input (a
		// pipe's buffered bytes), which nothing could read again.
		b := <-r.free
		b.Reset()
		b.Max, b.MaxBytes, b.Policy = r.o.ReadMessages, r.o.ReadBytes, r.p.opts.OnError
		rerr := r.src.Read(rctx, b)
		r.res.Read += uint64(b.Len())
		if r.o.OnRead != nil {
			r.o.OnRead(b)
		}
		// The last batch is submitted even when empty: it flushes the
		// group commit that the batches before it may be waiting in.
		if b.Len() == 0 && b.Cursor == nil && rerr == nil {
			r.free <- b
		} else if err := r.submit(b, rerr != nil); err != nil {
			return err
		}
		if rerr != nil {
			if rerr == io.EOF {
				return nil
			}
			return rerr
		}
	}
}

// submit queues b's request, chained to the one before by its cursor.
func (r *ingestRun) submit(b *SourceBatch, last bool) error {
	req := Request{Msgs: b.Msgs, Pos: b.Pos, Rejects: b.Rejects, Flush: last}
	// The cursor is copied: b goes back to the source before its
	// commit, which acknowledges the cursor, and the next request
	// compares against it.
	cursor := bytes.Clone(b.Cursor)
	if name := r.src.Name(); name != "" && cursor != nil {
		req.Cursor, req.CursorValue = name, cursor
		req.CursorCheck, req.CursorPrev = true, r.prev
		r.prev = cursor
	}
	// Not rctx: what was read goes in even when the reads are stopped.
	w, err := r.p.sendPending(context.Background(), req,
		&Pending{done: make(chan struct{}), released: make(chan struct{})})
	if err != nil {
		return err
	}
	r.flight <- ingestFlight{b: b, w: w, cursor: cursor}
	return nil
}

// recycle hands each submitted batch back to the reads once the processor
// has done with its slices, and passes it on to the collector.
func (r *ingestRun) recycle() {
	defer close(r.waiting)
	for f := range r.flight {
		<-f.w.released
		r.free <- f.b
		f.b = nil
		r.waiting <- f
	}
}

// collect waits for each submitted request in turn, sums the results of
// those that committed and tells the source. The first failure stops the
// reads.
func (r *ingestRun) collect() {
	ack, _ := r.src.(Acknowledger)
	for f := range r.waiting {
		res, err := f.w.Wait(context.Background())
		switch {
		case err == nil:
			r.res.Committed.Add(res)
			if ack != nil && f.cursor != nil {
				ack.Committed(f.cursor)
			}
		case r.failed == nil:
			// The requests after it fail with ErrCursorMoved (or the
			// same storage error): only the first is the cause.
			r.res.Committed.Add(res)
			r.failed = err
			r.stop(err)
		}
	}
}

// outcome is Ingest's error: a failed request's first, else the source's
// (other than the stop), else why the reads stopped.
func (r *ingestRun) outcome(ctx, rctx context.Context, readErr error) error {
	if r.failed != nil {
		return r.failed
	}
	stopped := context.Cause(rctx)
	switch {
	case readErr == nil:
		return nil
	case errors.Is(readErr, context.Canceled) || errors.Is(readErr, context.DeadlineExceeded):
		if errors.Is(stopped, ErrClosed) {
			return ErrClosed
		}
		if errors.Is(stopped, ErrFailed) || errors.Is(stopped, ErrLiveOutput) {
			return stopped // the processor's failure (see Ingest)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return readErr
}

// Add sums o into r.
func (r *Result) Add(o Result) {
	r.Accepted += o.Accepted
	r.Duplicates += o.Duplicates
	r.Stale += o.Stale
	r.Skipped += o.Skipped
	r.Quarantined += o.Quarantined
	r.Applied += o.Applied
	r.Output += o.Output
}

// Source is an input that Processor.Ingest reads: a file, a pipe, a
// partitioned log. Ingest commits the source's position (its cursor) in
// the same transaction as the messages read before it, so that a source
// reopened after a crash resumes just after what was committed. Because
// every statement of the protocol is true forever, a source that cannot
// resume exactly may re-read from an earlier position: what was committed
// already is then dropped as duplicates.
//
// Ingest calls Start once, then Read until it returns an error, then
// Close. Read is called from one goroutine at a time.
type Source interface {
	// Name identifies the input across runs: its cursor is committed
	// under this name. An empty name means the input cannot be resumed
	// (a pipe, stdin): it is read from its start every time.
	Name() string
	// Start prepares the source to read on from cursor, the last value
	// committed under Name (nil when none was, or Name is empty). A
	// source that finds the cursor does not match the input (a replaced
	// file) starts from the beginning and says so in its log; one that
	// cannot honour it (retention deleted unread data) returns an error.
	Start(ctx context.Context, cursor []byte) error
	// Read fills b (which the caller has Reset) with the next messages:
	// at most b.Max, returning as soon as it holds at least one message
	// or reject and no more input is available at once, so that a
	// producer that pauses has its messages committed promptly. It sets
	// b.Cursor to the position just after the last message or reject it
	// put in b. Undecodable input is handled by b.Policy: under Skip and
	// Quarantine it goes into b.Rejects; under Fail, Read returns the
	// *cdc.DecodeError, with b holding the messages before it and
	// b.Cursor just before the bad message.
	//
	// Read returns io.EOF at the end of the input (b may hold the last
	// messages); any other error ends the input after b's messages. When
	// ctx ends it returns what it holds with ctx.Err().
	Read(ctx context.Context, b *SourceBatch) error
	// Close releases the input.
	Close() error
}

// Acknowledger is implemented by a Source that wants to learn when its
// positions are durable (to report them to a broker's consumer group, for
// monitoring). Ingest calls Committed with each batch's cursor after the
// batch's transaction commits, in order.
type Acknowledger interface {
	Committed(cursor []byte)
}

// SourceBatch is what one Source.Read returns: decoded messages with their
// positions, the input it could not decode, and the source's position
// after them. The caller owns it and reuses it as soon as the processor
// has encoded the batch for the WAL, before its commit: a Source may
// overwrite the batch's slices then, but not the bytes its messages' Data
// and Counts, or its rejects' Raw, point to (the receiver may hold them).
// Reset empties it, keeping its buffers.
type SourceBatch struct {
	// Max, MaxBytes and Policy are set by the caller: the most messages
	// (and rejects) Read may put in the batch; about the most input bytes
	// it may read for them (a source stops after the message that reaches
	// it; 0: no limit); and what to do with undecodable input.
	Max      int
	MaxBytes int
	Policy   cdc.ErrorPolicy

	// Msgs are the decoded messages, Pos the position of each.
	Msgs []cdc.Message
	Pos  []cdc.Pos
	// Rejects is input that could not be decoded, under policy Skip or
	// Quarantine.
	Rejects []cdc.Reject
	// Cursor is the source's position after the batch, committed with it
	// under the source's Name; nil leaves the committed cursor as it is.
	Cursor []byte
}

// Len returns the number of messages and rejects in the batch.
func (b *SourceBatch) Len() int { return len(b.Msgs) + len(b.Rejects) }

// Reset empties the batch for another Read, keeping its buffers and its
// Max, MaxBytes and Policy.
func (b *SourceBatch) Reset() {
	clear(b.Rejects) // they hold raw bytes; messages are overwritten before use
	b.Msgs, b.Pos, b.Rejects, b.Cursor = b.Msgs[:0], b.Pos[:0], b.Rejects[:0], nil
}
