package jetstream

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/cdclog/cdclog/broker"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config is what every NATS connection of cdclog needs. Secrets come from
// Env (see package broker): CDCLOG_NATS_CREDS, CDCLOG_NATS_NKEY,
// CDCLOG_NATS_USER and _PASSWORD, CDCLOG_NATS_TOKEN and the
// CDCLOG_NATS_TLS variables.
type Config struct {
	// Servers are the seed servers, HOST:PORT.
	Servers []string
	// Env reads the environment; nil means the process's.
	Env broker.Env
	// Logger receives warnings; nil means slog.Default().
	Logger *slog.Logger
	// Opts are extra connection options, applied after cdclog's.
	Opts []nats.Option
}

func (c *Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.Default()
	}
	return c.Logger
}

// connect opens a connection that reconnects forever, and its JetStream
// context.
func (c *Config) connect() (*nats.Conn, jetstream.JetStream, error) {
	if len(c.Servers) == 0 {
		return nil, nil, fmt.Errorf("nats: no servers")
	}
	log := c.logger()
	opts := []nats.Option{
		nats.Name("cdclog"),
		nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats: disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats: reconnected", "server", nc.ConnectedServerName())
		}),
	}
	env := c.Env
	if f := env.Get("CDCLOG_NATS_CREDS"); f != "" {
		opts = append(opts, nats.UserCredentials(f))
	}
	if f := env.Get("CDCLOG_NATS_NKEY"); f != "" {
		o, err := nats.NkeyOptionFromSeed(f)
		if err != nil {
			return nil, nil, fmt.Errorf("nats: CDCLOG_NATS_NKEY: %w", err)
		}
		opts = append(opts, o)
	}
	pass, err := env.Secret("CDCLOG_NATS_PASSWORD")
	if err != nil {
		return nil, nil, fmt.Errorf("nats: %w", err)
	}
	if user := env.Get("CDCLOG_NATS_USER"); user != "" || pass != "" {
		opts = append(opts, nats.UserInfo(user, pass))
	}
	token, err := env.Secret("CDCLOG_NATS_TOKEN")
	if err != nil {
		return nil, nil, fmt.Errorf("nats: %w", err)
	}
	if token != "" {
		opts = append(opts, nats.Token(token))
	}
	tc, err := env.TLS("CDCLOG_NATS")
	if err != nil {
		return nil, nil, fmt.Errorf("nats: %w", err)
	}
	if tc != nil {
		opts = append(opts, nats.Secure(tc))
	}
	urls := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		urls[i] = "nats://" + s
		if tc != nil {
			urls[i] = "tls://" + s
		}
	}
	nc, err := nats.Connect(strings.Join(urls, ","), append(opts, c.Opts...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("nats: connect: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("nats: %w", err)
	}
	return nc, js, nil
}
