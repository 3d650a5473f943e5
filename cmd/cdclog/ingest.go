package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:      "ingest",
		Usage:     "durable processor: persist a CDC stream to a bbolt WAL and write the clean stream exactly once",
		UsageText: "cdclog ingest --db PATH [--out FILE] [--start T] [--on-error fail|skip|quarantine] [FILE...]",
		Description: `Reads a CDC stream that may be duplicated and reordered (the FILEs in turn, or
stdin when there is none), appends every accepted message to the write-ahead
log in the bbolt database PATH (created if needed), and releases the clean
stream: deduplicated, in time order, each time only once it is complete.

With --out FILE the clean stream goes to FILE exactly once: if the process is
killed at any instant, rerunning the same command on the same input ends with
FILE byte-identical to an uninterrupted run. Input already committed is not
read again when the input is the same regular file (its committed offset is
kept in the database); stdin is read again from the start and what was
already committed is dropped as duplicates. Rerunning on a finished input is
a no-op. Without --out the clean stream goes to stdout after each commit, and
stays in the database's output log ('cdclog replay' re-sends it).

--out FILE is locked while ingest writes it (a second ingest on it gives up
after --lock-timeout) and is only written or cut when it is the file this
database wrote: its committed bytes must match the checksum kept in the
database, and bytes past them are cut only when they are records an
interrupted run left. Otherwise ingest stops with an error and leaves the
file as it is; 'cdclog replay --db PATH > FILE' regenerates it. A new FILE
must be empty; going back to a FILE used before catches it up.

Stdout, and an --out that is not a regular file (a pipe, a device such as
/dev/null, /dev/stdout or another file descriptor), are streams: never cut or
checked, written at least once. Each run writes the records committed while
it runs, after each commit, and first those that an interrupted run before
it (with a stream too) committed but may not have written, which may
therefore appear twice. When the reader of the stream goes away (ingest ...
| head), ingest stops with a one-line error, exit code 1, and what it
committed stays in the database.

Protocol violations exit with code 3 and malformed input with code 1, after
committing everything accepted before them; --on-error skip counts and drops
such messages, --on-error quarantine keeps them in the database
('cdclog inspect --db PATH quarantine' shows them).

Examples:
   cdclog gen --times 100000 | cdclog mangle > in.jsonl
   cdclog ingest --db state.db --out clean.jsonl in.jsonl
   cdclog inspect --db state.db status
   producer | cdclog ingest --db state.db > clean.jsonl`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "db", Usage: "bbolt database `PATH` (created if missing; required)"},
			&cli.StringFlag{Name: "out", Usage: "exactly-once output `FILE`, locked while written (default: stdout; a pipe or device is a stream, at least once)"},
			&cli.Uint64Flag{Name: "start", Usage: "initial frontier `T` of a new database: times below it count as complete"},
			onErrorFlag(),
			&cli.IntFlag{Name: "batch-messages", Value: recovery.DefaultBatchMessages, Usage: "group commit: at most `N` messages per transaction"},
			&cli.DurationFlag{Name: "batch-delay", Value: recovery.DefaultBatchDelay, Usage: "group commit: wait at most `D` for more messages"},
			&cli.DurationFlag{Name: "lock-timeout", Value: 3 * time.Second, Usage: "give up after `D` if another process holds the database (0: do not wait)"},
			metricsFlag(),
		},
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("ingest"),
		Action:          runIngest,
	}
}

func runIngest(c *cli.Context) error {
	e := getEnv(c)
	if err := requireFlags(c, "db"); err != nil {
		return err
	}
	policy, err := cdc.ParseErrorPolicy(c.String("on-error"))
	if err != nil {
		return usageError("--on-error: %v", err)
	}
	wait, err := lockWait(c.Duration("lock-timeout"))
	if err != nil {
		return err
	}
	mx, err := startMetrics(e, c.String("metrics"))
	if err != nil {
		return err
	}
	defer mx.close()
	opts := recovery.Options{
		BatchMessages: c.Int("batch-messages"), BatchDelay: c.Duration("batch-delay"),
		Start: c.Uint64("start"), OnError: policy, Logger: e.log, LockTimeout: wait,
		Observer: mx.observer(),
	}
	closeOut, err := openOutput(e, c.String("out"), wait, &opts)
	if err != nil {
		return err
	}
	p, err := recovery.Open(c.String("db"), opts)
	if err != nil {
		closeOut(false)
		return withCode(exitFailure, err)
	}
	defer closeOut(true)
	mx.watch(p)
	in := &ingester{e: e, p: p, policy: policy, started: time.Now(), prog: newInputProgress(e, "ingest", c.Args().Slice())}
	runErr := in.run(c.Context, c.Args().Slice())
	in.prog.finish()
	st, stErr := p.Status()
	if err := p.Close(); err != nil && runErr == nil {
		runErr = withCode(exitFailure, err)
	}
	in.report(c.String("db"), st, stErr)
	return runErr
}

// ingester feeds input files to a processor, a few requests in flight so
// that decoding, the receiver and the commits overlap.
type ingester struct {
	pool    batchPool
	e       *env
	p       *recovery.Processor
	policy  cdc.ErrorPolicy
	started time.Time
	read    uint64
	res     recovery.Result
	prog    *inputProgress // nil unless stderr is a terminal
}

const maxInFlight = 16

func (in *ingester) run(ctx context.Context, files []string) error {
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, name := range files {
		if err := in.file(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// file ingests one input, resuming from its committed cursor if it is the
// same regular file.
func (in *ingester) file(ctx context.Context, name string) error {
	in.prog.clear() // openSource may log
	src, err := openSource(in.e, name, in.p)
	if err != nil {
		return err
	}
	defer src.close()
	in.prog.startInput(src.reader.Offset())
	// Batches are decoded here, between submissions, rather than on a
	// goroutine of their own: the processor's three goroutines keep both
	// cores busy, and a decoding goroutine handing batches to this one
	// left both waiting to be scheduled (about 100 ms per 2M messages in
	// an execution trace) while the apply goroutine ran out of input.
	var pending []inFlight
	var inputErr error
	// Each request expects the cursor where the previous one left it, so
	// that if one fails (a protocol violation under --on-error fail), the
	// requests already submitted after it are not applied and cannot
	// commit an offset past the messages it left out.
	var prev []byte
	if src.cursor != "" {
		prev = in.p.Cursor(src.cursor)
	}
	for more := true; more; {
		var b *inputBatch
		b, more = readBatch(src.reader, in.policy, &in.pool)
		req := recovery.Request{Msgs: b.msgs, Pos: b.pos, Rejects: b.rejects}
		if src.cursor != "" {
			req.Cursor, req.CursorValue = src.cursor, src.mark(b.offset, b.line)
			req.CursorCheck, req.CursorPrev = true, prev
			prev = req.CursorValue
		}
		in.read += uint64(len(b.msgs) + len(b.rejects))
		in.prog.batch(b.offset, len(b.msgs)+len(b.rejects), in.p.Frontier)
		w, err := in.p.Submit(ctx, req)
		if err != nil {
			return withCode(exitFailure, err)
		}
		pending = append(pending, inFlight{w, b})
		if len(pending) >= maxInFlight {
			if err := in.wait(ctx, pending[0]); err != nil {
				in.drain(ctx, pending[1:])
				return err
			}
			pending = pending[1:]
		}
		if b.err != nil {
			inputErr = withCode(exitFailure, b.err)
			break
		}
	}
	if err := in.drain(ctx, pending); err != nil {
		return err
	}
	return inputErr
}

// inFlight is a submitted request and the batch it came from, recycled
// once the request has committed.
type inFlight struct {
	w *recovery.Pending
	b *inputBatch
}

// wait collects one request's result.
func (in *ingester) wait(ctx context.Context, f inFlight) error {
	res, err := f.w.Wait(ctx)
	if err == nil || ctx.Err() == nil {
		in.pool.put(f.b) // the processor is done with it
	}
	in.res.Accepted += res.Accepted
	in.res.Duplicates += res.Duplicates
	in.res.Stale += res.Stale
	in.res.Skipped += res.Skipped
	in.res.Quarantined += res.Quarantined
	in.res.Output += res.Output
	if err != nil && !errors.Is(err, recovery.ErrFailed) && !errors.Is(err, recovery.ErrClosed) {
		return err // a protocol violation or invalid message: exit code by type
	}
	return withCode(exitFailure, err)
}

// drain waits for every request still in flight and returns the first
// error.
func (in *ingester) drain(ctx context.Context, pending []inFlight) error {
	var first error
	for _, w := range pending {
		if err := in.wait(ctx, w); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// report writes the run's one summary line: what this run read and did,
// then where the database's stream stands (st, unless stErr).
func (in *ingester) report(db string, st recovery.Status, stErr error) {
	elapsed := time.Since(in.started)
	rate := float64(in.read) / max(elapsed.Seconds(), 1e-9)
	attrs := []slog.Attr{slog.String("db", db), slog.Uint64("messages", in.read), slog.Any("accepted", in.res.Accepted),
		slog.Any("duplicates", in.res.Duplicates), slog.Any("stale", in.res.Stale),
		slog.Any("skipped", in.res.Skipped), slog.Any("quarantined", in.res.Quarantined),
		slog.Any("records_out", in.res.Output)}
	if stErr == nil {
		attrs = append(attrs, frontierAttrs(st.Frontier, st.Complete, st.Waiting, st.Reason)...)
		attrs = append(attrs, slog.Int("pending_updates", st.PendingUpdates))
	}
	attrs = append(attrs, slog.Duration("elapsed", elapsed.Round(time.Millisecond)), slog.String("msgs_per_s", fmt.Sprintf("%.0f", rate)))
	logSummary(in.e, "ingest finished", attrs...)
}
