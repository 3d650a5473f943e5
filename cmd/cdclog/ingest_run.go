package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/cdclog/cdclog/recovery"
)

// ingester runs ingest's sources through the processor in turn, with the
// progress display on a terminal and a progress log otherwise.
type ingester struct {
	e       *env
	p       *recovery.Processor
	srcs    sources
	started time.Time
	read    atomic.Uint64
	res     recovery.Result
	prog    *inputProgress  // nil unless stderr is a terminal
	plog    *progressLogger // nil when stderr is a terminal, or off
	current progressSource
}

func newIngester(e *env, p *recovery.Processor, srcs sources, every time.Duration) *ingester {
	in := &ingester{e: e, p: p, srcs: srcs, started: time.Now()}
	in.prog = newInputProgress(e, "ingest", sourceNames(srcs))
	if in.prog == nil {
		in.plog = startProgressLog(e, "ingest progress", every, in.progressAttrs)
	}
	return in
}

// sourceNames are the paths of the sources, for the progress bar's total
// ("-" for a stream: no total).
func sourceNames(srcs sources) []string {
	names := make([]string, len(srcs))
	for i, s := range srcs {
		names[i] = "-"
		if f, ok := s.(interface{ Label() string }); ok && s.Name() != "" {
			names[i] = f.Label()
		}
	}
	return names
}

// run ingests each source in turn; the first error stops it.
func (in *ingester) run(ctx context.Context) error {
	for _, s := range in.srcs {
		in.prog.clear() // starting a source may log
		in.current = progressSource{Source: s, prog: in.prog}
		res, err := in.p.Ingest(ctx, in.current, recovery.IngestOptions{OnRead: in.onRead})
		in.res.Add(res.Committed)
		if err != nil {
			return ingestError(err)
		}
	}
	return nil
}

// onRead counts a batch read, for the progress display and log.
func (in *ingester) onRead(b *recovery.SourceBatch) {
	in.read.Add(uint64(b.Len()))
	in.prog.batch(in.current.offset(), b.Len(), in.p.Frontier)
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
	return err
}

// finish ends the progress display and log.
func (in *ingester) finish() {
	in.prog.finish()
	in.plog.stop()
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
	attrs := []slog.Attr{slog.String("db", db), slog.Uint64("messages", read), slog.Any("accepted", in.res.Accepted),
		slog.Any("duplicates", in.res.Duplicates), slog.Any("stale", in.res.Stale),
		slog.Any("skipped", in.res.Skipped), slog.Any("quarantined", in.res.Quarantined),
		slog.Any("records_out", in.res.Output)}
	if stErr == nil {
		attrs = append(attrs, frontierAttrs(st.Frontier, st.Complete, st.Waiting, st.Reason)...)
		attrs = append(attrs, slog.Int("pending_updates", st.PendingUpdates))
	}
	attrs = append(attrs, slog.Duration("elapsed", elapsed.Round(time.Millisecond)), slog.String("msgs_per_s", fmt.Sprintf("%.0f", rate)))
	msg := "ingest finished"
	if sig != nil {
		msg = "ingest stopped"
		attrs = append(attrs, slog.String("signal", signalName(sig)),
			slog.String("resume", "rerun the same command: file inputs resume after what was committed"))
	}
	logSummary(in.e, msg, attrs...)
}
