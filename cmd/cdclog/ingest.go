package main

import (
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"github.com/urfave/cli/v2"
)

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:      "ingest",
		Usage:     "durable processor: persist a CDC stream to a bbolt WAL and write the clean stream exactly once",
		UsageText: "cdclog ingest --db PATH [--from INPUT...] [--to URL] [--out FILE] [--start T] [--on-error fail|skip|quarantine] [--follow] [FILE...]",
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

A live feed (a pipe, stdin, a followed file) is committed as it comes:
whatever has been read is committed, and its clean records written, within
about --batch-delay after the producer pauses. --batch-messages N commits at
most N messages a transaction. A finished input is committed at once, not
held back by the delay.

A regular FILE may still be being written: its last line, when it has no
line end and is not a whole message, is left unread (the committed offset
stops before it) and read by a rerun once it is complete. --follow FILE keeps
reading one regular FILE as it grows, like 'tail -F': across rotation (a new
file at the path is read from its start, after the old one's end) and
truncation (read again from the start); it ends only on a signal.

SIGINT (Ctrl-C) or SIGTERM stops reading, commits everything read, writes
what it completes, logs one summary line and exits: code 0 after SIGTERM,
130 after SIGINT. A second signal exits at once (the next run recovers all
that was committed). A rerun resumes a FILE where it stopped; stdin is read
from wherever its producer is.

While ingest runs, 'cdclog inspect' (and 'cdclog replay --db') on the same
database are answered by it over a control socket next to the database
(PATH.sock, the owner's only).

When stderr is not a terminal, a one-line progress log is written every
--progress-interval (10s; 0 or --quiet: none).

Brokers (docs/brokers.md): --from takes kafka://BROKERS/TOPIC and
nats://SERVERS/STREAM[/SUBJECT] as well as files (a plain path is a file, as
a FILE argument is, and - is stdin); --from inputs come before the FILE
arguments. Every partition of a topic feeds this one database: one database
per CDC collection. Files and stdin are read first, in turn, each to its
end; then the broker inputs (and a --follow FILE) are read concurrently,
each resuming from the position committed in the database, until a signal: a
broker input never ends. A committed position the log no longer holds
(retention deleted unread input, a topic or stream created anew) exits 1
unless --allow-gap.

--to URL forwards the clean stream exactly once to a Kafka topic (of exactly
1 partition) or a JetStream subject, from the output log in the database,
beside --out FILE if given (with --to, stdout gets the stream only with
--out -). Ingest never waits for the output: during a broker outage the
database buffers it, and --max-sink-lag N holds the input back instead.
When the inputs end, ingest exits once the output has every record; after a
signal or an error it waits at most --drain-timeout for it, and says so; what
is left is forwarded by the next run or by 'cdclog publish'. A newer writer
with the same --sink-id fences this one (exit 1), as does an output whose
last record this database did not write (unless --takeover). Secrets (SASL,
TLS, NATS credentials) come from the environment, never from flags.

Protocol violations exit with code 3 and malformed input with code 1, after
committing everything accepted before them; --on-error skip counts and drops
such messages, --on-error quarantine keeps them in the database
('cdclog inspect --db PATH quarantine' shows them).

Examples:
   cdclog gen --times 100000 | cdclog mangle > in.jsonl
   cdclog ingest --db state.db --out clean.jsonl in.jsonl
   cdclog inspect --db state.db status
   producer | cdclog ingest --db state.db > clean.jsonl
   cdclog ingest --db state.db --out clean.jsonl --follow /var/log/cdc.jsonl
   cdclog ingest --db state.db --from kafka://b1:9092,b2:9092/cdc-orders --to kafka://b1:9092/orders-clean
   cdclog ingest --db state.db --from nats://n1:4222/ORDERS_CDC --to nats://n1:4222/CLEAN/clean.orders
   cdclog ingest --db state.db --from kafka://b1:9092/cdc-orders --out clean.jsonl`,
		Flags: append([]cli.Flag{
			newDBFlag(),
			&cli.StringFlag{Name: "out", Usage: "exactly-once output `FILE`, locked while written (default: stdout; a pipe or device is a stream, at least once)"},
			&cli.Uint64Flag{Name: "start", Usage: "initial frontier `T` of a new database: times below it count as complete (an existing database refuses another)"},
			onErrorFlag(),
			batchMessagesFlag(),
			&cli.DurationFlag{Name: "batch-delay", Value: recovery.DefaultBatchDelay, Usage: "group commit: wait at most `D` for more messages"},
			lockTimeoutFlag(),
			&cli.BoolFlag{Name: "follow", Aliases: []string{"F"}, Usage: "keep reading the one FILE as it grows and across rotation, until a signal"},
			&cli.DurationFlag{Name: "progress-interval", Value: 10 * time.Second, Usage: "when stderr is not a terminal, log progress every `D` (0: never)"},
			metricsFlag(),
		}, ingestBrokerFlags()...),
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
	sink, err := parseSink(c, e, "ingest", "max-sink-lag", "drain-timeout")
	if err != nil {
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
	defer mx.close()
	opts := recovery.Options{
		BatchMessages: c.Int("batch-messages"), BatchDelay: c.Duration("batch-delay"),
		Start: c.Uint64("start"), StartSet: c.IsSet("start"), OnError: policy, Logger: e.log, LockTimeout: wait,
		Observer: mx.observer(),
	}
	closeOut := func(bool) {}
	// With --to, the clean stream goes to stdout only when --out asks.
	if sink == nil || c.String("out") != "" {
		if closeOut, err = openOutput(e, c.String("out"), wait, &opts); err != nil {
			return err
		}
	}
	p, err := recovery.Open(c.String("db"), opts)
	if err != nil {
		closeOut(false)
		return withCode(exitFailure, err)
	}
	defer closeOut(true)
	mx.watch(p)
	ctl := listenControl(e, c.String("db"), p)
	defer ctl.close()
	ctx, sig := stopOnSignal(c.Context, e)
	defer sig.release()
	in := newIngester(e, p, inputs, c.Duration("progress-interval"))
	runErr := in.run(ctx, sink, c.Uint64("max-sink-lag"), c.Duration("drain-timeout"))
	in.finish()
	ctl.close()
	st, stErr := p.Status()
	if err := p.Close(); err != nil && runErr == nil {
		runErr = withCode(exitFailure, err)
	}
	in.report(c.String("db"), st, stErr, sig.Received())
	return sig.outcome(runErr)
}
