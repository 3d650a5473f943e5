package relay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/broker/jetstream"
	"github.com/cdclog/cdclog/broker/kafka"
)

func TestDescribeDecodesBrokerCursorsTheirRecordedEndsAndSinks(t *testing.T) {
	kc := kafka.Cursor{TopicID: [16]byte{0xab}, Partitions: map[int32]kafka.Position{0: {Offset: 10, Epoch: 2}, 3: {Offset: 7, Epoch: -1}}}
	ends, _ := json.Marshal(InputEnds{Ends: map[int32]int64{0: 15, 3: 5}, At: 1})
	sink, _ := json.Marshal(SinkState{SinkID: "orders", Acked: 40, At: 2})
	cursors := map[string][]byte{
		"kafka:in":                   kc.Encode(),
		EndCursor("kafka:in"):        ends,
		"nats:IN/cdc.x":              jetstream.Cursor{Created: 3e9, Next: 5}.Encode(),
		SinkCursor("kafka:clean"):    sink,
		"input:/data/in.jsonl":       []byte(`{"offset":1}`),
		"nats:BROKEN":                []byte("junk"),
		SinkCursor("nats:OUT/clean"): []byte("{"),
	}
	pos, err := Describe(cursors, 50)
	if err == nil || !strings.Contains(err.Error(), "nats:BROKEN") || !strings.Contains(err.Error(), "sink:nats:OUT/clean") {
		t.Errorf("error %v: want both damaged cursors named", err)
	}
	if len(pos.Inputs) != 3 || len(pos.Sinks) != 1 {
		t.Fatalf("got %+v", pos)
	}
	p0, p3, n := pos.Inputs[0], pos.Inputs[1], pos.Inputs[2]
	switch {
	case p0.Input != "kafka:in" || *p0.Partition != 0 || p0.Next != 10 || *p0.LeaderEpoch != 2 || *p0.LogEnd != 15 || *p0.Lag != 5 || p0.TopicID[:2] != "ab" || p0.LogEndSeenAt == "":
		t.Errorf("partition 0: %+v", p0)
	case *p3.Partition != 3 || p3.LeaderEpoch != nil || *p3.LogEnd != 5 || *p3.Lag != 0:
		t.Errorf("partition 3 (end recorded before the position moved past it): %+v", p3)
	case n.Broker != "nats" || n.Partition != nil || n.Next != 5 || n.StreamCreated != "1970-01-01T00:00:03Z" || n.LogEnd != nil || n.Lag != nil:
		t.Errorf("nats input: %+v", n)
	}
	if s := pos.Sinks[0]; s.Output != "kafka:clean" || s.SinkID != "orders" || s.Acked != 40 || s.Lag != 10 {
		t.Errorf("sink: %+v", s)
	}
}

func TestDescribeOfNoBrokerCursorsIsEmptyListsNotNull(t *testing.T) {
	pos, err := Describe(map[string][]byte{"input:/x": []byte("{}")}, 3)
	b, _ := json.Marshal(pos)
	if err != nil || string(b) != `{"inputs":[],"sinks":[]}` {
		t.Errorf("got %s, %v", b, err)
	}
}
