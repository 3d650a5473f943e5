package kafka

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cdclog/cdclog/broker"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Config is what every Kafka client of cdclog needs. Secrets come from
// Env (see package broker): CDCLOG_KAFKA_SASL_MECHANISM, _SASL_USER,
// _SASL_PASSWORD and the CDCLOG_KAFKA_TLS variables.
type Config struct {
	// Brokers are the seed brokers, HOST:PORT.
	Brokers []string
	// Env reads the environment; nil means the process's.
	Env broker.Env
	// Logger receives the client's warnings and errors; nil means
	// slog.Default().
	Logger *slog.Logger
	// Opts are extra client options, applied after cdclog's (for tests
	// and tuning).
	Opts []kgo.Opt
}

func (c *Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.Default()
	}
	return c.Logger
}

// clientOpts returns the options shared by every client: the seeds,
// TLS and SASL, and the logger.
func (c *Config) clientOpts() ([]kgo.Opt, error) {
	if len(c.Brokers) == 0 {
		return nil, fmt.Errorf("kafka: no brokers")
	}
	opts := []kgo.Opt{kgo.SeedBrokers(c.Brokers...), kgo.WithLogger(slogger{c.logger()})}
	tc, err := c.Env.TLS("CDCLOG_KAFKA")
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	if tc != nil {
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	mech := c.Env.Get("CDCLOG_KAFKA_SASL_MECHANISM")
	user := c.Env.Get("CDCLOG_KAFKA_SASL_USER")
	pass, err := c.Env.Secret("CDCLOG_KAFKA_SASL_PASSWORD")
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	switch mech {
	case "":
		if user != "" || pass != "" {
			return nil, fmt.Errorf("kafka: CDCLOG_KAFKA_SASL_USER or _PASSWORD set without CDCLOG_KAFKA_SASL_MECHANISM")
		}
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("kafka: CDCLOG_KAFKA_SASL_MECHANISM=%q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mech)
	}
	return opts, nil
}

// newClient returns a client with the shared options, then extra, then
// the caller's Opts.
func (c *Config) newClient(extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := c.clientOpts()
	if err != nil {
		return nil, err
	}
	opts = append(append(opts, extra...), c.Opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return cl, nil
}

// slogger passes the client's warnings and errors to slog.
type slogger struct{ l *slog.Logger }

// The client's info messages (every connection and metadata load) are
// logged at slog's debug level, its debug messages below that.
func (s slogger) Level() kgo.LogLevel {
	switch ctx := context.Background(); {
	case s.l.Enabled(ctx, slog.LevelDebug-4):
		return kgo.LogLevelDebug
	case s.l.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelInfo
	}
	return kgo.LogLevelWarn
}

func (s slogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	l := slog.LevelWarn
	switch level {
	case kgo.LogLevelError:
		l = slog.LevelError
	case kgo.LogLevelInfo:
		l = slog.LevelDebug
	case kgo.LogLevelDebug:
		l = slog.LevelDebug - 4
	}
	s.l.Log(context.Background(), l, "kafka client: "+msg, keyvals...)
}
