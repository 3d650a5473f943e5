package relay

import (
	"context"

	"github.com/cdclog/cdclog/broker"
)

// Publish forwards to s's output every record committed to its processor
// when Publish is called, then records the sink's position and returns
// nil: for a database that no ingest is writing to (`cdclog publish`). It
// opens a session even when there is nothing to forward, so that the
// output is verified. When ctx ends first it records how far it got and
// returns ctx's error; a forwarder error that is not retried (a fencing,
// a foreign output) is returned as it is. A Sink runs once: Publish and
// Run each take a new one.
func Publish(ctx context.Context, s *Sink) error {
	s.start((*broker.Forwarder).Drain)
	select {
	case <-s.Stopped():
	case <-ctx.Done():
	}
	if err := s.stop(); err != nil {
		return err
	}
	if ctx.Err() != nil && s.f.Lag() > 0 {
		return ctx.Err()
	}
	return nil
}
