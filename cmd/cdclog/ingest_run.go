package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/internal/sigstop"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
)

// ingester runs ingest's inputs through the processor (relay.Run: files
// in turn, then broker inputs concurrently, and the broker output beside
// them), with the progress display on a terminal and a progress log
// otherwise.
type ingester struct {
	e       *env
	p       *recovery.Processor
	started time.Time
	run     relay.Run
	res     relay.Result
	mu      sync.Mutex       // serialises the progress display between inputs
	prog    *progress.Input  // nil unless stderr is a terminal
	plog    *progress.Logger // nil when stderr is a terminal, or off
}

// newIngester returns the ingester of inputs into p, forwarding the output
// to sink when there is one, and starts the progress log (every: its
// interval).
func newIngester(e *env, p *recovery.Processor, inputs *relay.Inputs, sink *relay.OutputSpec, maxLag uint64, drain time.Duration, every time.Duration) *ingester {
	in := &ingester{e: e, p: p, started: time.Now()}
	in.prog = newInputProgress(e, "ingest", inputs.Names)
	in.run = relay.Run{InTurn: inputs.InTurn, Endless: inputs.Endless, MaxSinkLag: maxLag, DrainTimeout: drain, Logger: e.log,
		BeforeStart: in.beforeStart, OnStart: in.onStart, OnRead: in.onRead}
	if sink != nil {
		in.run.Sink = sink.NewSink(p)
	}
	if in.prog == nil {
		in.plog = startProgressLog(e, "ingest progress", every, in.progressAttrs)
	}
	return in
}

// ingest runs the inputs; the first error stops it.
func (in *ingester) ingest(ctx context.Context) error {
	res, err := in.run.Run(ctx, in.p)
	in.res = res
	if err != nil {
		return ingestError(err)
	}
	return nil
}

// beforeStart clears the progress display: starting an input may log.
func (in *ingester) beforeStart(recovery.Source) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.prog.Clear()
}

// onStart tells the progress display where an input starts (a resumed
// file: the bytes before are no work left).
func (in *ingester) onStart(src recovery.Source) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.prog.StartInput(relay.Offset(src))
}

// onRead shows a batch read from src on the progress display.
func (in *ingester) onRead(src recovery.Source, b *recovery.SourceBatch) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.prog.Batch(relay.Offset(src), b.Len(), in.p.Frontier)
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
	attrs := []slog.Attr{slog.Uint64("messages", in.run.Read())}
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
	rate := float64(in.res.Read) / max(elapsed.Seconds(), 1e-9)
	attrs := append([]slog.Attr{slog.String("db", db)}, in.res.LogAttrs()...)
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
