package relay

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cdclog/cdclog/broker/jetstream"
	"github.com/cdclog/cdclog/broker/kafka"
)

// Positions are the broker positions a database holds, decoded from its
// cursors for `cdclog inspect status`. They are as of the last commit, and
// nothing in them comes from a broker at the time of asking: the log ends
// are what the running sources last saw, recorded by Run.
type Positions struct {
	Inputs []InputPosition `json:"inputs"`
	Sinks  []SinkPosition  `json:"sinks"`
}

// InputPosition is where reading one partition of a broker input resumes.
type InputPosition struct {
	// Input names the input: "kafka:TOPIC" or "nats:STREAM[/SUBJECT]".
	Input string `json:"input"`
	// Broker is "kafka" or "nats".
	Broker string `json:"broker"`
	// Partition is the Kafka partition; nil for JetStream, which has one
	// order.
	Partition *int32 `json:"partition"`
	// Next is the next offset (Kafka) or stream sequence (JetStream) to
	// read.
	Next int64 `json:"next"`
	// LeaderEpoch is the Kafka leader epoch of the last record read; nil
	// when unknown, and for JetStream.
	LeaderEpoch *int32 `json:"leader_epoch"`
	// TopicID is the Kafka topic's id, in hex ("" when the brokers report
	// none, and for JetStream); StreamCreated the JetStream stream's
	// creation time ("" for Kafka). A topic or stream created anew has
	// another, and is refused as going backwards.
	TopicID       string `json:"topic_id"`
	StreamCreated string `json:"stream_created"`
	// LogEnd is the offset or sequence after the partition's last message
	// as the running source last saw it, at LogEndSeenAt; Lag is LogEnd
	// less Next (0 when the recorded end is older than the position). Both
	// are nil when not known: never recorded, or a JetStream input with a
	// subject filter.
	LogEnd       *int64 `json:"log_end"`
	Lag          *int64 `json:"lag"`
	LogEndSeenAt string `json:"log_end_seen_at"`
}

// SinkPosition is how far a broker output is known to hold the output
// log.
type SinkPosition struct {
	// Output names it: "kafka:TOPIC" or "nats:STREAM[/SUBJECT]".
	Output string `json:"output"`
	SinkID string `json:"sink_id"`
	// Acked is the last record known to be on the output; Lag the
	// committed records after it (the database's output records less
	// Acked, 0 when the output is ahead of the database).
	Acked uint64 `json:"acked"`
	Lag   uint64 `json:"lag"`
	// RecordedAt is when Acked was known.
	RecordedAt string `json:"recorded_at"`
}

// Describe decodes the broker positions among a database's cursors
// (recovery.Reader.Cursors). outputRecords is the database's count of
// committed output records, for the sinks' lag. What cannot be decoded is
// left out and named in the error; the rest is returned.
func Describe(cursors map[string][]byte, outputRecords uint64) (Positions, error) {
	var pos Positions
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(cursors)) {
		v := cursors[name]
		var err error
		switch {
		case strings.HasPrefix(name, "kafka:"):
			err = pos.addKafka(name, v, cursors[EndCursor(name)])
		case strings.HasPrefix(name, "nats:"):
			err = pos.addNATS(name, v, cursors[EndCursor(name)])
		case strings.HasPrefix(name, sinkPrefix):
			err = pos.addSink(strings.TrimPrefix(name, sinkPrefix), v, outputRecords)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cursor %s: %w", name, err))
		}
	}
	if pos.Inputs == nil {
		pos.Inputs = []InputPosition{}
	}
	if pos.Sinks == nil {
		pos.Sinks = []SinkPosition{}
	}
	return pos, errors.Join(errs...)
}

func (pos *Positions) addKafka(name string, v, endv []byte) error {
	c, err := kafka.DecodeCursor(v)
	if err != nil {
		return err
	}
	ends, seen, err := decodeEnds(endv)
	id := ""
	if c.TopicID != [16]byte{} {
		id = hex.EncodeToString(c.TopicID[:])
	}
	for _, p := range slices.Sorted(maps.Keys(c.Partitions)) {
		at := c.Partitions[p]
		ip := InputPosition{Input: name, Broker: "kafka", Partition: &p, Next: at.Offset, TopicID: id}
		if at.Epoch >= 0 {
			ip.LeaderEpoch = &at.Epoch
		}
		ip.setEnd(ends, p, seen)
		pos.Inputs = append(pos.Inputs, ip)
	}
	return err
}

func (pos *Positions) addNATS(name string, v, endv []byte) error {
	c, err := jetstream.DecodeCursor(v)
	if err != nil {
		return err
	}
	ends, seen, err := decodeEnds(endv)
	ip := InputPosition{Input: name, Broker: "nats", Next: int64(c.Next),
		StreamCreated: time.Unix(0, c.Created).UTC().Format(time.RFC3339Nano)}
	ip.setEnd(ends, 0, seen)
	pos.Inputs = append(pos.Inputs, ip)
	return err
}

// setEnd fills in the log end and lag of partition p, when recorded.
func (ip *InputPosition) setEnd(ends map[int32]int64, p int32, seen string) {
	end, ok := ends[p]
	if !ok {
		return
	}
	lag := max(0, end-ip.Next)
	ip.LogEnd, ip.Lag, ip.LogEndSeenAt = &end, &lag, seen
}

// decodeEnds decodes recorded InputEnds; none recorded is no error.
func decodeEnds(v []byte) (map[int32]int64, string, error) {
	if v == nil {
		return nil, "", nil
	}
	e, err := DecodeInputEnds(v)
	if err != nil {
		return nil, "", err
	}
	return e.Ends, stamp(e.At), nil
}

func (pos *Positions) addSink(output string, v []byte, outputRecords uint64) error {
	s, err := DecodeSinkState(v)
	if err != nil {
		return err
	}
	pos.Sinks = append(pos.Sinks, SinkPosition{Output: output, SinkID: s.SinkID, Acked: s.Acked,
		Lag: outputRecords - min(outputRecords, s.Acked), RecordedAt: stamp(s.At)})
	return nil
}

func stamp(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}
