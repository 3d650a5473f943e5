package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/internal/sigstop"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
)

// ingester runs ingest's inputs through the processor (package relay:
// files in turn, then broker inputs concurrently, and the broker output
// beside them), with the progress display on a terminal and a progress
// log otherwise.
type ingester struct {
	e       *env
	p       *recovery.Processor
	inputs  *relay.Inputs
	started time.Time
	read    atomic.Uint64
	res     relay.Result
	sink    *relay.Sink      // nil without --to
	mu      sync.Mutex       // serialises the progress display
	prog    *progress.Input  // nil unless stderr is a terminal
	plog    *progress.Logger // nil when stderr is a terminal, or off
}

func newIngester(e *env, p *recovery.Processor, inputs *relay.Inputs, every time.Duration) *ingester {
	in := &ingester{e: e, p: p, inputs: inputs, started: time.Now()}
	in.prog = newInputProgress(e, "ingest", inputs.Names)
	if in.prog == nil {
		in.plog = startProgressLog(e, "ingest progress", every, in.progressAttrs)
	}
	return in
}

// run ingests the inputs, forwarding the output to sink when there is
// one; the first error stops it.
func (in *ingester) run(ctx context.Context, sink *relay.OutputSpec, maxLag uint64, drain time.Duration) error {
	r := &relay.Run{InTurn: in.wrap(in.inputs.InTurn), Endless: in.wrap(in.inputs.Endless),
		Options: in.options, MaxSinkLag: maxLag, DrainTimeout: drain, Logger: in.e.log}
	if sink != nil {
		in.sink = sink.NewSink(in.p)
		r.Sink = in.sink
	}
	res, err := r.Run(ctx, in.p)
	in.res = res
	if err != nil {
		return ingestError(err)
	}
	return nil
}

// wrap gives each source the progress display.
func (in *ingester) wrap(srcs []recovery.Source) []recovery.Source {
	out := make([]recovery.Source, len(srcs))
	for i, s := range srcs {
		out[i] = progressSource{Source: s, prog: in.prog, mu: &in.mu}
	}
	return out
}

// options are each source's Ingest options: counting its batches.
func (in *ingester) options(src recovery.Source) recovery.IngestOptions {
	ps := src.(progressSource)
	return recovery.IngestOptions{OnRead: func(b *recovery.SourceBatch) { in.onRead(ps, b) }}
}

// onRead counts a batch read from src, for the progress display and log.
func (in *ingester) onRead(src progressSource, b *recovery.SourceBatch) {
	in.read.Add(uint64(b.Len()))
	in.mu.Lock()
	defer in.mu.Unlock()
	in.prog.Batch(src.offset(), b.Len(), in.p.Frontier)
}

// ingestError gives Ingest's error its exit code: a violation's or an
// invalid message's by its type (see reportError), a storage failure 1.
func ingestError(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return err // a signal: see signalStop.outcome
	case errors.Is(err, recovery.ErrFailed), errors.Is(err, recovery.ErrClosed):
		return withCode(exitFailure, err)
	}
	return err // a broker input's gap, a fenced output: exit 1 too
}

// finish ends the progress display and log.
func (in *ingester) finish() {
	in.prog.Finish()
	in.plog.Stop()
}

// progressAttrs are the periodic progress log's fields.
func (in *ingester) progressAttrs() []slog.Attr {
	f, done := in.p.Frontier()
	attrs := []slog.Attr{slog.Uint64("messages", in.read.Load())}
	if done {
		return append(attrs, slog.Bool("complete", true))
	}
	return append(attrs, slog.Uint64("frontier", f))
}

// report writes the run's one summary line: what this run read and
// committed, then where the database's stream stands (st, unless stErr),
// and after a signal, how to go on.
func (in *ingester) report(db string, st recovery.Status, stErr error, sig os.Signal) {
	elapsed := time.Since(in.started)
	read := in.read.Load()
	rate := float64(read) / max(elapsed.Seconds(), 1e-9)
	attrs := append([]slog.Attr{slog.String("db", db), slog.Uint64("messages", read)}, in.res.Committed.LogAttrs()...)
	if in.sink != nil {
		attrs = append(attrs, slog.String("sink", in.sink.Name()), slog.Uint64("sink_acked", in.sink.Forwarder().Acked()),
			slog.Uint64("sink_unsent", in.res.Unsent))
	}
	if stErr == nil {
		attrs = append(attrs, st.LogAttrs()...)
		attrs = append(attrs, slog.Int("pending_updates", st.PendingUpdates))
	}
	attrs = append(attrs, slog.Duration("elapsed", elapsed.Round(time.Millisecond)), slog.String("msgs_per_s", fmt.Sprintf("%.0f", rate)))
	msg := "ingest finished"
	if sig != nil {
		msg = "ingest stopped"
		attrs = append(attrs, slog.String("signal", sigstop.Name(sig)),
			slog.String("resume", "rerun the same command: file and broker inputs resume after what was committed"))
	}
	logSummary(in.e, msg, attrs...)
}
