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
		Name:        "publish",
		Usage:       "forward a database's stored clean stream to Kafka or NATS JetStream, exactly once, while ingest is stopped",
		UsageText:   "cdclog publish --db PATH --to URL [--sink-id ID] [--takeover] [--transaction-timeout D] [--sink-timeout D]",
		Description: helpText("publish"),
		Flags:       append(append(dbFlags(), &cli.StringFlag{Name: "to", Usage: "the output `URL`: kafka://BROKERS/TOPIC or nats://SERVERS/STREAM[/SUBJECT] (required)"}), sinkFlags()...),
		Action:      runPublish,
	}
}

func runPublish(c *cli.Context) error {
	e := getEnv(c)
	if err := noArgs(c, "publish"); err != nil {
		return err
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
		return openError(path, err)
	}
	ctl := listenControl(e, path, p) // inspect may ask while it runs
	defer ctl.Close()
	ctx, sig := stopOnSignal(c.Context, e)
	defer sig.release()
	started := time.Now()
	res, runErr := relay.Publish(ctx, spec.NewSink(p))
	ctl.Close()
	if err := p.Close(); err != nil && runErr == nil {
		runErr = withCode(exitFailure, err)
	}
	msg := "publish finished"
	if sig.Received() != nil {
		msg = "publish stopped"
	}
	attrs := append([]slog.Attr{slog.String("db", path)}, res.LogAttrs()...)
	logSummary(e, msg, append(attrs, slog.Duration("elapsed", time.Since(started).Round(time.Millisecond)))...)
	return sig.outcome(runErr)
}
