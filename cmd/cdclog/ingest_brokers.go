package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/broker/kafka"
	"github.com/cdclog/cdclog/relay"
	"github.com/urfave/cli/v2"
)

// This file holds ingest's broker inputs and its broker output (--from
// URL, --to URL), and the sink flags that publish shares; package relay
// runs them.

// defaultSinkTimeout bounds a read-back and a publish acknowledgement.
const defaultSinkTimeout = 30 * time.Second

// ingestBrokerFlags are ingest's flags for broker inputs and the output.
func ingestBrokerFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringSliceFlag{Name: "from", Usage: "read `INPUT`: kafka://BROKERS/TOPIC, nats://SERVERS/STREAM[/SUBJECT], a FILE or - (stdin); repeatable, read before the FILE arguments"},
		&cli.StringFlag{Name: "to", Usage: "forward the clean stream, exactly once, to `URL`: kafka://BROKERS/TOPIC or nats://SERVERS/STREAM[/SUBJECT]"},
		&cli.BoolFlag{Name: "allow-gap", Usage: "broker inputs: go on from the log's start when retention deleted unread input or the input was re-created (default: exit 1)"},
		&cli.StringFlag{Name: "commit-group", Usage: "Kafka inputs: also write the committed positions to consumer group `NAME`, for monitoring tools"},
		&cli.DurationFlag{Name: "partition-check", Value: kafka.DefaultPartitionCheck, Usage: "Kafka inputs: look for partitions added to the topic every `D`"},
		&cli.Uint64Flag{Name: "max-sink-lag", Usage: "with --to: hold the input back while the output is more than `N` records behind (0: no limit)"},
		&cli.DurationFlag{Name: "drain-timeout", Value: relay.DefaultDrainTimeout, Usage: "with --to: once stopped by a signal or an error, wait at most `D` for the output to receive what was committed"},
	}, sinkFlags()...)
}

// sinkFlags configure a broker output: ingest --to and publish.
func sinkFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sink-id", Usage: "`ID` of the output's writer: a newer writer with the same id fences the older (default: the topic or subject)"},
		&cli.BoolFlag{Name: "takeover", Usage: "accept an output whose last record this database did not write, or that is ahead of it, and go on after that record"},
		&cli.DurationFlag{Name: "transaction-timeout", Value: kafka.DefaultTransactionTimeout, Usage: "Kafka output: the producer's transaction timeout `D` (the brokers' transaction.max.timeout.ms must allow it)"},
		&cli.DurationFlag{Name: "sink-timeout", Value: defaultSinkTimeout, Usage: "bound the read-back of the output's last record, and the wait for the acknowledgement of a JetStream publish or atomic batch, to `D`"},
	}
}

// openIngestInputs opens every input that --from and the FILE arguments
// name (stdin when none), before anything is ingested or created, so that
// a missing file or a bad URL stops the run first (relay.ParseInputs and
// InputList.Open).
func openIngestInputs(c *cli.Context, e *env) (*relay.Inputs, error) {
	list, err := relay.ParseInputs(append(c.StringSlice("from"), c.Args().Slice()...))
	if err != nil {
		return nil, usageError("ingest: %v", err)
	}
	so := relay.SourceOptions{Format: e.inFormat, AllowGap: c.Bool("allow-gap"), CommitGroup: c.String("commit-group"), Logger: e.log}
	if c.IsSet("partition-check") { // else zero: the library's default, the flag's
		so.PartitionCheck = c.Duration("partition-check")
	}
	if err := list.Validate(so); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	in, err := list.Open(relay.InputOptions{Stdin: e.stdin, Follow: c.Bool("follow"), Source: so})
	switch {
	case errors.Is(err, relay.ErrOption):
		return nil, usageError("ingest: %v", err)
	case err != nil:
		return nil, withCode(exitFailure, err)
	}
	return in, nil
}

// parseSink reads --to and the sink flags of command cmd into the output
// they name (relay.ParseOutput). With no --to it returns nil, refusing
// the sink flags (cmd's own in only, besides sinkFlags) if given.
func parseSink(c *cli.Context, e *env, cmd string, only ...string) (*relay.OutputSpec, error) {
	to := c.String("to")
	if to == "" {
		if f := firstSet(c, append([]string{"sink-id", "takeover", "transaction-timeout", "sink-timeout"}, only...)...); f != "" {
			return nil, usageError("%s: --%s applies to a broker output, and there is no --to", cmd, f)
		}
		return nil, nil
	}
	o := relay.OutputOptions{SinkID: c.String("sink-id"), Timeout: c.Duration("sink-timeout"), Logger: e.log}
	if c.IsSet("transaction-timeout") { // else the broker's default, or none
		o.TransactionTimeout = c.Duration("transaction-timeout")
	}
	spec, err := relay.ParseOutput(to, o, broker.ForwarderOptions{Format: e.outFormat, Takeover: c.Bool("takeover"), Logger: e.log})
	if err != nil {
		return nil, usageError("%s: %v", cmd, err)
	}
	return spec, nil
}
