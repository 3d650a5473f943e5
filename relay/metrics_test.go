package relay

import (
	"reflect"
	"testing"

	"github.com/cdclog/cdclog/metrics"
)

func TestPositionsBecomeTheMetricsFiguresWithNoPartitionForJetStream(t *testing.T) {
	p3, end := int32(3), int64(90)
	pos := Positions{
		Inputs: []InputPosition{
			{Input: "kafka:cdc", Broker: "kafka", Partition: &p3, Next: 80, LogEnd: &end},
			{Input: "nats:IN/x", Broker: "nats", Next: 5},
		},
		Sinks: []SinkPosition{{Output: "kafka:clean", Acked: 40, Lag: 2}},
	}
	ins, sinks := pos.figures()
	wantIns := []metrics.BrokerInput{{Input: "kafka:cdc", Partition: 3, Next: 80, LogEnd: &end}, {Input: "nats:IN/x", Partition: -1, Next: 5}}
	if !reflect.DeepEqual(ins, wantIns) {
		t.Errorf("inputs %+v, want %+v", ins, wantIns)
	}
	if want := []metrics.BrokerSink{{Output: "kafka:clean", Acked: 40, Lag: 2}}; !reflect.DeepEqual(sinks, want) {
		t.Errorf("sinks %+v, want %+v", sinks, want)
	}
	var none Positions
	if ins, sinks := none.figures(); ins == nil || sinks == nil || len(ins)+len(sinks) != 0 {
		t.Errorf("no positions: %v, %v; want empty, not nil", ins, sinks)
	}
}
