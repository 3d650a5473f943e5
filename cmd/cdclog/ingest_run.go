package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cdclog/cdclog/internal/progress"
	"github.com/cdclog/cdclog/internal/sigstop"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
)

// ingestInputs runs ingest's inputs through p (relay.Run: files in turn,
// then broker inputs concurrently, and the output to sink beside them when
// there is one), with the progress display on a terminal and otherwise a
// progress log every interval; the first error stops it.
func ingestInputs(ctx context.Context, e *env, p *recovery.Processor, inputs *relay.Inputs, sink *relay.OutputSpec, maxLag uint64, drain, every time.Duration) (relay.Result, error) {
	prog := newInputProgress(e, "ingest", inputs.Names) // nil unless stderr is a terminal
	run := relay.Run{InTurn: inputs.InTurn, Endless: inputs.Endless, MaxSinkLag: maxLag, DrainTimeout: drain, Logger: e.log,
		// Starting an input may log: the display is cleared first. A
		// resumed file's bytes before where it starts are no work left.
		BeforeStart: func(recovery.Source) { prog.Clear() },
		OnStart:     func(src recovery.Source) { prog.StartInput(relay.Offset(src)) },
		OnRead: func(src recovery.Source, b *recovery.SourceBatch) {
			prog.Batch(relay.Offset(src), b.Len(), p.Frontier)
		},
	}
	if sink != nil {
		run.Sink = sink.NewSink(p)
	}
	var plog *progress.Logger // nil when stderr is a terminal, or off
	if prog == nil {
		plog = startProgressLog(e, "ingest progress", every, func() []slog.Attr {
			f, done := p.Frontier()
			attrs := []slog.Attr{slog.Uint64("messages", run.Read())}
			if done {
				return append(attrs, slog.Bool("complete", true))
			}
			return append(attrs, slog.Uint64("frontier", f))
		})
	}
	res, err := run.Run(ctx, p)
	prog.Finish()
	plog.Stop()
	return res, ingestError(err)
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
	return err // nil, a broker input's gap, a fenced output: exit 1 too
}

// reportIngest writes the run's one summary line: what the run that
// started at started read and committed (res), then where the database's
// stream stands (st, unless stErr), and after a signal, how to go on.
func reportIngest(e *env, db string, res relay.Result, started time.Time, st recovery.Status, stErr error, sig os.Signal) {
	elapsed := time.Since(started)
	rate := float64(res.Read) / max(elapsed.Seconds(), 1e-9)
	attrs := append([]slog.Attr{slog.String("db", db)}, res.LogAttrs()...)
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
	logSummary(e, msg, attrs...)
}
