package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/cdclog/cdclog/recovery"
)

// The prefixes of the cursors Run records (see the package
// documentation). Input cursors are named by their sources: "kafka:TOPIC",
// "nats:STREAM[/SUBJECT]", "input:PATH".
const (
	sinkPrefix = "sink:"
	endPrefix  = "end:"
)

// DefaultRecordEvery is how often Run records the sink's position and the
// inputs' log ends, when they changed.
const DefaultRecordEvery = time.Second

// SinkCursor is the cursor name under which the position of the sink to
// output (an Endpoint's Name, such as "kafka:clean") is recorded.
func SinkCursor(output string) string { return sinkPrefix + output }

// EndCursor is the cursor name under which the log ends of the input
// named input (a Source's Name) are recorded.
func EndCursor(input string) string { return endPrefix + input }

// SinkState is what is recorded of a sink: the last record known to be on
// the output, when that was found.
type SinkState struct {
	// SinkID is the sink's id (Kafka: its transactional id is
	// "cdclog-" + SinkID).
	SinkID string `json:"sink_id"`
	// Acked is the sequence number of the last record known to be on the
	// output (0: none).
	Acked uint64 `json:"acked"`
	// Writer is the forwarder instance (broker.HeaderWriter).
	Writer string `json:"writer"`
	// At is when it was known, in Unix nanoseconds.
	At int64 `json:"at"`
}

// InputEnds is what is recorded of an input's log: each partition's end
// (the offset or sequence after its last message) as the running source
// last saw it. JetStream has one order, partition 0.
type InputEnds struct {
	Ends map[int32]int64 `json:"ends"`
	At   int64           `json:"at"`
}

// DecodeSinkState decodes a recorded SinkState.
func DecodeSinkState(b []byte) (SinkState, error) {
	var s SinkState
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("recorded sink position: %w", err)
	}
	return s, nil
}

// DecodeInputEnds decodes recorded InputEnds.
func DecodeInputEnds(b []byte) (InputEnds, error) {
	var e InputEnds
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("recorded log ends: %w", err)
	}
	return e, nil
}

// record commits one cursor value, alone, and waits for the commit (it
// joins whatever group commit is under way).
func record(ctx context.Context, p *recovery.Processor, name string, value []byte) error {
	w, err := p.Submit(ctx, recovery.Request{Cursor: name, CursorValue: value})
	if err != nil {
		return err
	}
	_, err = w.Wait(ctx)
	return err
}

// endReporter is a source that knows its log's ends (kafka.Source,
// jetstream.Source).
type endReporter interface {
	LogEnds() map[int32]int64
}

// unwrapper is a source that wraps another (broker.Throttle, Run's start
// hooks).
type unwrapper interface {
	Unwrap() recovery.Source
}

// reporterOf finds the endReporter inside src, if any.
func reporterOf(src recovery.Source) (endReporter, bool) {
	for {
		if r, ok := src.(endReporter); ok {
			return r, true
		}
		u, ok := src.(unwrapper)
		if !ok {
			return nil, false
		}
		src = u.Unwrap()
	}
}

// endRecorder records the log ends of the sources that report them,
// when they changed.
type endRecorder struct {
	p    *recovery.Processor
	log  *slog.Logger
	srcs map[string]endReporter
	last map[string]map[int32]int64
}

func newEndRecorder(p *recovery.Processor, log *slog.Logger, srcs []recovery.Source) *endRecorder {
	r := &endRecorder{p: p, log: log, srcs: map[string]endReporter{}, last: map[string]map[int32]int64{}}
	for _, s := range srcs {
		if rep, ok := reporterOf(s); ok && s.Name() != "" {
			r.srcs[s.Name()] = rep
		}
	}
	return r
}

// flush records what changed since the last flush.
func (r *endRecorder) flush(ctx context.Context) {
	for name, rep := range r.srcs {
		ends := rep.LogEnds()
		if len(ends) == 0 || maps.Equal(ends, r.last[name]) {
			continue
		}
		b, _ := json.Marshal(InputEnds{Ends: ends, At: time.Now().UnixNano()}) // integers: cannot fail
		if err := record(ctx, r.p, EndCursor(name), b); err != nil {
			r.log.Debug("relay: recording the input's log ends", "input", name, "err", err)
			continue
		}
		r.last[name] = ends
	}
}
