package relay

import (
	"context"
	"log/slog"

	"github.com/cdclog/cdclog/broker"
)

// PublishResult is what a Publish did, as `cdclog publish` sums it up.
type PublishResult struct {
	// Output is the Sink's Name.
	Output string
	// Records is how many records the database's output log held when
	// Publish returned (its last sequence number).
	Records uint64
	// Acked is how many records the output had acknowledged, and Unsent
	// how many of Records it had not (0 when it is ahead).
	Acked, Unsent uint64
}

// LogAttrs returns the result as log fields, in the order of `cdclog
// publish`'s summary line: output, records, acked and unsent.
func (r PublishResult) LogAttrs() []slog.Attr {
	return []slog.Attr{slog.String("output", r.Output), slog.Uint64("records", r.Records),
		slog.Uint64("acked", r.Acked), slog.Uint64("unsent", r.Unsent)}
}

// Publish forwards to s's output every record committed to its processor
// when Publish is called, then records the sink's position and returns
// nil: for a database that no ingest is writing to (`cdclog publish`). It
// opens a session even when there is nothing to forward, so that the
// output is verified. When ctx ends first it records how far it got and
// returns ctx's error; a forwarder error that is not retried (a fencing,
// a foreign output) is returned as it is. The result says how far the
// output got in every case. A Sink runs once: Publish and Run each take a
// new one.
func Publish(ctx context.Context, s *Sink) (PublishResult, error) {
	s.start((*broker.Forwarder).Drain)
	select {
	case <-s.Stopped():
	case <-ctx.Done():
	}
	err := s.stop()
	if err == nil && ctx.Err() != nil && s.f.Lag() > 0 {
		err = ctx.Err()
	}
	records, acked := s.p.OutputEnd()-1, s.f.Acked()
	return PublishResult{Output: s.Name(), Records: records, Acked: acked, Unsent: records - min(records, acked)}, err
}
