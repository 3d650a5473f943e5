package relay

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/broker/jetstream"
	"github.com/cdclog/cdclog/broker/kafka"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// ErrOption is wrapped by the errors of Source and Output for an option
// that the endpoint's broker does not take. It matches cdc.ErrOption, as
// every refusal of an option does.
var ErrOption error = brokerOptionError{}

// brokerOptionError is ErrOption's type: a comparable value whose text is
// ErrOption's and that errors.Is also takes for cdc.ErrOption.
type brokerOptionError struct{}

func (brokerOptionError) Error() string        { return "option does not apply to this broker" }
func (brokerOptionError) Is(target error) bool { return target == cdc.ErrOption }

// SourceOptions configure a broker source.
type SourceOptions struct {
	// Format is the encoding of record values.
	Format cdc.Format
	// AllowGap goes on from the log's start where a committed position is
	// no longer in the log, instead of failing with a
	// *broker.PositionError.
	AllowGap bool
	// CommitGroup (Kafka only) also writes the committed positions to this
	// consumer group, for monitoring tools.
	CommitGroup string
	// PartitionCheck (Kafka only) is how often to look for partitions
	// added to the topic; zero means kafka.DefaultPartitionCheck.
	PartitionCheck time.Duration
	// Env reads secrets; nil means the process's environment.
	Env broker.Env
	// Logger receives the source's warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Source returns the source that ep names, not yet connected:
// Processor.Ingest starts it.
func Source(ep broker.Endpoint, o SourceOptions) (recovery.Source, error) {
	switch ep.Kind {
	case broker.Kafka:
		return kafka.NewSource(kafka.SourceOptions{
			Config: kafka.Config{Brokers: ep.Servers, Env: o.Env, Logger: o.Logger},
			Topic:  ep.Topic, Format: o.Format, AllowGap: o.AllowGap,
			CommitGroup: o.CommitGroup, PartitionCheck: o.PartitionCheck,
		}), nil
	case broker.NATS:
		if o.CommitGroup != "" {
			return nil, fmt.Errorf("%s: a consumer group (--commit-group) is Kafka's: %w", ep.Name(), ErrOption)
		}
		return jetstream.NewSource(jetstream.SourceOptions{
			Config: jetstream.Config{Servers: ep.Servers, Env: o.Env, Logger: o.Logger},
			Stream: ep.Stream, Subject: ep.Subject, Format: o.Format, AllowGap: o.AllowGap,
		}), nil
	}
	return nil, fmt.Errorf("broker source: unknown kind %v", ep.Kind)
}

// OutputOptions configure a broker output.
type OutputOptions struct {
	// SinkID names the sink: two writers with one sink id fence each
	// other. Empty means the topic (Kafka) or the subject (JetStream).
	SinkID string
	// TransactionTimeout (Kafka only) is the producer's transaction
	// timeout; zero means kafka.DefaultTransactionTimeout.
	TransactionTimeout time.Duration
	// Timeout bounds the read-back of the output's last record (Kafka)
	// and the wait for a publish's acknowledgement (JetStream); zero
	// means the broker package's default.
	Timeout time.Duration
	// Env reads secrets; nil means the process's environment.
	Env broker.Env
	// Logger receives the output's warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Output returns the output that ep names, not yet connected: each
// Forwarder session opens it.
func Output(ep broker.Endpoint, o OutputOptions) (broker.Output, error) {
	switch ep.Kind {
	case broker.Kafka:
		return kafka.NewOutput(kafka.OutputOptions{
			Config: kafka.Config{Brokers: ep.Servers, Env: o.Env, Logger: o.Logger},
			Topic:  ep.Topic, SinkID: o.SinkID,
			TransactionTimeout: o.TransactionTimeout, ReadBackTimeout: o.Timeout,
		}), nil
	case broker.NATS:
		if o.TransactionTimeout != 0 {
			return nil, fmt.Errorf("%s: JetStream has no transactions (--transaction-timeout is Kafka's): %w", ep.Name(), ErrOption)
		}
		if ep.Subject != "" && !broker.Literal(ep.Subject) {
			// Known from the URL alone: refused before any connection,
			// rather than by every session against the server.
			return nil, &cdc.OptionError{Option: "--to", Reason: fmt.Sprintf("%s: cannot publish to a subject with wildcards (name one literal subject)", ep.Name())}
		}
		return jetstream.NewOutput(jetstream.OutputOptions{
			Config: jetstream.Config{Servers: ep.Servers, Env: o.Env, Logger: o.Logger},
			Stream: ep.Stream, Subject: ep.Subject, SinkID: o.SinkID, AckTimeout: o.Timeout,
		}), nil
	}
	return nil, fmt.Errorf("broker output: unknown kind %v", ep.Kind)
}

// SinkID returns the sink id an output of ep gets when none is given:
// the topic, or the subject (empty when the URL names none: the stream's
// only subject, found when the output is opened).
func SinkID(ep broker.Endpoint) string {
	if ep.Kind == broker.Kafka {
		return ep.Topic
	}
	return ep.Subject
}
