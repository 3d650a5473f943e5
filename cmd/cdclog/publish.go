package main

import (
	"log/slog"
	"time"

	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
	"github.com/urfave/cli/v2"
)

func publishCommand() *cli.Command {
	return &cli.Command{
		Name:      "publish",
		Usage:     "forward a database's stored clean stream to Kafka or NATS JetStream, exactly once, while ingest is stopped",
		UsageText: "cdclog publish --db PATH --to URL [--sink-id ID] [--takeover] [--transaction-timeout D] [--sink-timeout D]",
		Description: `Forwards the output log of the database PATH (what 'cdclog ingest' committed)
to a Kafka topic or a JetStream subject, then exits 0 once the output holds
every committed record. It is 'ingest --to URL' without the input: for a
database whose ingest ran without --to, or stopped before its output had
everything. It holds the database, like ingest, so it runs while no ingest
does; 'ingest --to URL' forwards as it goes.

URL is kafka://BROKERS/TOPIC (a topic with exactly 1 partition) or
nats://SERVERS/STREAM[/SUBJECT]. Every record reaches the output exactly once:
publish first fences older writers with the same --sink-id (default: the
topic or subject), reads back the output's last record, checks that this
database wrote it, byte for byte, and goes on after it. An output whose last
record another database or program wrote, or that is ahead of this
database, is refused (exit 1) unless --takeover. A newer writer with the same
sink id stops this one (exit 1). Broker errors are retried, with a back-off,
until the output has everything or a signal stops publish.

The position reached is recorded in the database: 'cdclog inspect status'
shows it. Secrets come from the environment, never from flags: see
docs/brokers.md.

Records are written in --out-format (or --format): one JSON message without
a line end, or one msgpack message, with the headers cdclog-seq (the
sequence number), cdclog-db and cdclog-writer. Kafka readers need
isolation.level=read_committed.

SIGINT or SIGTERM stops publish after recording how far it got; a rerun goes
on from there.

Examples:
   cdclog publish --db state.db --to kafka://b1:9092,b2:9092/orders-clean
   cdclog publish --db state.db --to nats://n1:4222/CLEAN/clean.orders`,
		Flags:           append(append(dbFlags(), &cli.StringFlag{Name: "to", Usage: "the output `URL`: kafka://BROKERS/TOPIC or nats://SERVERS/STREAM[/SUBJECT] (required)"}), sinkFlags()...),
		HideHelpCommand: true,
		OnUsageError:    commandUsageError("publish"),
		Action:          runPublish,
	}
}

func runPublish(c *cli.Context) error {
	e := getEnv(c)
	if c.NArg() > 0 {
		return usageError("publish takes no arguments, got %q", c.Args().Slice())
	}
	path, err := dbPath(c, "publish")
	if err != nil {
		return err
	}
	if err := requireFlags(c, "to"); err != nil {
		return err
	}
	timeout, err := lockTimeout(c)
	if err != nil {
		return err
	}
	spec, err := parseSink(c, e, "publish")
	if err != nil {
		return err
	}
	p, err := recovery.Open(path, recovery.Options{NoCreate: true, LockTimeout: timeout, Logger: e.log})
	if err != nil {
		return withCode(exitFailure, err)
	}
	ctl := listenControl(e, path, p) // inspect may ask while it runs
	defer ctl.close()
	ctx, sig := stopOnSignal(c.Context, e)
	defer sig.release()
	started := time.Now()
	sink := spec.sink(p)
	runErr := relay.Publish(ctx, sink)
	records := p.OutputEnd() - 1
	ctl.close()
	if err := p.Close(); err != nil && runErr == nil {
		runErr = withCode(exitFailure, err)
	}
	f := sink.Forwarder()
	msg := "publish finished"
	if sig.Received() != nil {
		msg = "publish stopped"
	}
	logSummary(e, msg, slog.String("db", path), slog.String("output", spec.ep.Name()),
		slog.Uint64("records", records), slog.Uint64("acked", f.Acked()), slog.Uint64("unsent", records-min(records, f.Acked())),
		slog.Duration("elapsed", time.Since(started).Round(time.Millisecond)))
	return sig.outcome(runErr)
}
