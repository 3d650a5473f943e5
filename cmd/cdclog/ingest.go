package main

import (
	"time"

	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
	"github.com/urfave/cli/v2"
)

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:        "ingest",
		Usage:       "durable processor: persist a CDC stream to a bbolt WAL and write the clean stream exactly once",
		UsageText:   "cdclog ingest --db PATH [--from INPUT...] [--to URL] [--out FILE] [--start T] [--on-error fail|skip|quarantine] [--follow] [FILE...]",
		Description: helpText("ingest"),
		Flags: append([]cli.Flag{
			newDBFlag(),
			&cli.StringFlag{Name: "out", Usage: "exactly-once output `FILE`, locked while written (default: stdout; a pipe or device is a stream, at least once)"},
			&cli.Uint64Flag{Name: "start", Usage: "initial frontier `T` of a new database: times below it count as complete (an existing database refuses another)"},
			onErrorFlag(),
			batchMessagesFlag(),
			&cli.DurationFlag{Name: "batch-delay", Value: recovery.DefaultBatchDelay, Usage: "group commit: wait at most `D` for more messages (0: commit what was read at once)"},
			lockTimeoutFlag(),
			&cli.BoolFlag{Name: "follow", Aliases: []string{"F"}, Usage: "keep reading the one FILE as it grows and across rotation, until a signal"},
			&cli.DurationFlag{Name: "progress-interval", Value: 10 * time.Second, Usage: "when stderr is not a terminal, log progress every `D` (0: never)"},
			metricsFlag(),
		}, ingestBrokerFlags()...),
		Action: runIngest,
	}
}

func runIngest(c *cli.Context) error {
	e := getEnv(c)
	opts, err := processorOptions(c, e)
	if err != nil {
		return err
	}
	sink, err := parseSink(c, e, "ingest", "max-sink-lag", "drain-timeout")
	if err != nil {
		return err
	}
	if err := checkOutNamesItsOwnFile(c); err != nil {
		return err
	}
	// Every input is opened before the database: a missing one creates
	// nothing.
	inputs, err := openIngestInputs(c, e)
	if err != nil {
		return err
	}
	defer inputs.Close()
	mx, err := startMetrics(e, c.String("metrics"))
	if err != nil {
		return err
	}
	defer mx.Close()
	opts.Observer = mx.Observer()
	var out *recovery.OutputPath // nil: none
	// With --to, the clean stream goes to stdout only when --out asks.
	if sink == nil || c.String("out") != "" {
		if out, err = openOutput(e, c.String("out"), &opts); err != nil {
			return err
		}
		e.stdoutStream = opts.Live == e.stdout
	}
	p, err := recovery.Open(c.String("db"), opts)
	if err != nil {
		out.Abort()
		return openError(c.String("db"), err)
	}
	defer out.Close()
	mx.Watch(p, relay.BrokerMetrics(p))
	ctl := listenControl(e, c.String("db"), p)
	defer ctl.Close()
	ctx, sig := stopOnSignal(c.Context, e)
	defer sig.release()
	started := time.Now()
	res, runErr := ingestInputs(ctx, e, p, inputs, sink, c.Uint64("max-sink-lag"), c.Duration("drain-timeout"), c.Duration("progress-interval"))
	ctl.Close()
	st, stErr := p.Status()
	if err := p.Close(); err != nil && runErr == nil {
		runErr = withCode(exitFailure, err)
	}
	reportIngest(e, c.String("db"), res, started, st, stErr, sig.Received())
	return sig.outcome(runErr)
}

// processorOptions reads the flags ingest and serve share into the
// options of the durable processor they open: --db (required),
// --on-error, --lock-timeout, --batch-messages, --batch-delay and --start
// (an explicit --start 0 included, so that both refuse it on a database
// created with another start).
func processorOptions(c *cli.Context, e *env) (recovery.Options, error) {
	if err := requireFlags(c, "db"); err != nil {
		return recovery.Options{}, err
	}
	policy, err := onErrorPolicy(c)
	if err != nil {
		return recovery.Options{}, err
	}
	wait, err := lockWait(c.Duration("lock-timeout"))
	if err != nil {
		return recovery.Options{}, err
	}
	// The library reads a zero as its default; on the command line 0 is
	// what it says.
	batch := c.Int("batch-messages")
	if batch < 1 {
		return recovery.Options{}, usageError("--batch-messages %d: a transaction holds at least 1 message", batch)
	}
	delay := c.Duration("batch-delay")
	switch {
	case delay < 0:
		return recovery.Options{}, usageError("--batch-delay %v: the wait cannot be negative (0: commit without waiting for more)", delay)
	case delay == 0:
		delay = time.Nanosecond
	}
	return recovery.Options{
		BatchMessages: batch, BatchDelay: delay,
		Start: c.Uint64("start"), StartSet: c.IsSet("start"), OnError: policy, Logger: e.log, LockTimeout: wait,
	}, nil
}

// checkOutNamesItsOwnFile refuses an --out that is the database or one
// of the inputs (recovery.CheckOutput) as a usage error.
func checkOutNamesItsOwnFile(c *cli.Context) error {
	inputs := append(c.StringSlice("from"), c.Args().Slice()...)
	if err := recovery.CheckOutput(c.String("out"), c.String("db"), inputs); err != nil {
		return usageError("%v", err)
	}
	return nil
}
