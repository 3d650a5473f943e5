package main

import (
	"errors"
	"log/slog"
	"time"

	"github.com/cdclog/cdclog/inspect"
	"github.com/cdclog/cdclog/internal/cliargs"
	"github.com/cdclog/cdclog/internal/listen"
	"github.com/cdclog/cdclog/metrics"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/server"
	"github.com/urfave/cli/v2"
)

// defaultListen is serve's address without --listen.
const defaultListen = "127.0.0.1:8470"

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:        "serve",
		Usage:       "the durable processor behind HTTP: append messages, read the clean stream, status and metrics",
		UsageText:   "cdclog serve --db PATH [--listen ADDR] [--on-error fail|skip|quarantine] [--max-body SIZE]",
		Description: helpText("serve"),
		Flags: []cli.Flag{
			newDBFlag(),
			&cli.StringFlag{Name: "listen", Value: defaultListen, Usage: "answer HTTP on `ADDR`; :PORT is loopback only; a wider address lets anyone who reaches it append and read (no authentication)"},
			onErrorFlag(),
			&cli.StringFlag{Name: "max-body", Value: "64MiB", Usage: "refuse (413) an append body over `SIZE` (bytes, or with KiB, MiB, GiB)"},
			&cli.StringFlag{Name: "max-inflight", Usage: "hold at most `SIZE` of append bodies at once; more appends wait their turn (default: 8 × --max-body)"},
			&cli.Uint64Flag{Name: "start", Usage: "initial frontier `T` of a new database: times below it count as complete"},
			batchMessagesFlag(),
			&cli.DurationFlag{Name: "batch-delay", Value: serveBatchDelay, Usage: "group commit: wait at most `D` for more appends once one came (longer than ingest's 2ms: concurrent producers then share commits, and fsyncs; 0: no wait)"},
			lockTimeoutFlag(),
		},
		Action: runServe,
	}
}

// serveBatchDelay is serve's default group-commit delay. Each producer
// waits for its append's commit before it sends the next, so with 2ms
// the appends of 8 producers met only 3 to a commit; 5ms gathers about 7,
// for 1.3 to 2x the appends per second (scripts/bench-serve), and a
// trickling producer's records still come out within 20ms (p99).
const serveBatchDelay = 5 * time.Millisecond

func runServe(c *cli.Context) error {
	e := getEnv(c)
	opts, err := processorOptions(c, e)
	if err != nil {
		return err
	}
	so := server.Options{Format: e.inFormat, Logger: e.log}
	if so.MaxBody, err = cliargs.ParseSize(c.String("max-body")); err != nil {
		return usageError("--max-body: %v", err)
	} else if so.MaxBody == 0 { // the library's default, but not what the flag says
		return usageError("--max-body 0: an append could hold no message")
	}
	if c.IsSet("max-inflight") {
		if so.MaxInFlight, err = cliargs.ParseSize(c.String("max-inflight")); err != nil {
			return usageError("--max-inflight: %v", err)
		} else if so.MaxInFlight < so.MaxBody { // Validate's check, in the sizes as spelt (0 is its default)
			return usageError("--max-inflight %s is less than --max-body %s: no body could be held", c.String("max-inflight"), c.String("max-body"))
		}
	}
	if err := so.Validate(); err != nil {
		return err
	}
	ln, err := listen.TCP(c.String("listen"))
	if errors.Is(err, listen.ErrAddress) {
		return usageError("--listen %v", err)
	} else if err != nil {
		return withCode(exitFailure, err)
	}
	defer ln.Close()
	m := metrics.New(e.log)
	db := c.String("db")
	opts.Observer = m
	p, err := recovery.Open(db, opts)
	if err != nil {
		return openError(db, err)
	}
	m.Watch(p)
	so.Metrics = m.Handler()
	so.Status = func() (any, error) { return inspect.ReadStatus(p, e.log) }
	s, err := server.New(p, so)
	if err != nil {
		p.Close()
		return err
	}
	addr := ln.Addr().String()
	if listen.Wide(addr) {
		e.log.Warn("serving beyond the loopback interface, without authentication: anyone who reaches it can append to and read the stream", "addr", addr)
	}
	ctl := listenControl(e, db, p)
	defer ctl.Close()
	// Signals are caught before the line that says serve is up.
	ctx, sig := stopOnSignal(c.Context, e)
	defer sig.release()
	e.log.Info("serving", "db", db, "url", "http://"+addr)
	started := time.Now()
	runErr := s.Serve(ctx, ln)
	ctl.Close()
	st, stErr := p.Status()
	if err := p.Close(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	reportServe(e, db, s.Stats(), st, stErr, time.Since(started))
	return sig.outcome(withCode(exitFailure, runErr))
}

// reportServe writes serve's one summary line: what the appends did, then
// where the stream stands (st, unless stErr).
func reportServe(e *env, db string, s server.Stats, st recovery.Status, stErr error, elapsed time.Duration) {
	attrs := append([]slog.Attr{slog.String("db", db)}, s.LogAttrs()...)
	if stErr == nil {
		attrs = append(attrs, st.LogAttrs()...)
		attrs = append(attrs, slog.Uint64("output_records", st.OutputRecords))
	}
	attrs = append(attrs, slog.Duration("elapsed", elapsed.Round(time.Millisecond)))
	logSummary(e, "serve stopped", attrs...)
}
