package relay

import (
	"github.com/cdclog/cdclog/metrics"
	"github.com/cdclog/cdclog/recovery"
)

// BrokerMetrics returns what Metrics.WatchBrokers reads of p: the broker
// positions among its committed cursors (Describe), as the metrics'
// figures. A cursor that cannot be decoded is left out, and the error
// says why.
func BrokerMetrics(p *recovery.Processor) metrics.Brokers {
	return func() ([]metrics.BrokerInput, []metrics.BrokerSink, error) {
		pos, err := Describe(p.Cursors(), p.OutputEnd()-1)
		ins, sinks := pos.figures()
		return ins, sinks, err
	}
}

// figures turns the decoded positions into the metrics': a JetStream
// input's partition is -1.
func (pos *Positions) figures() ([]metrics.BrokerInput, []metrics.BrokerSink) {
	ins := make([]metrics.BrokerInput, 0, len(pos.Inputs))
	for _, in := range pos.Inputs {
		part := int32(-1)
		if in.Partition != nil {
			part = *in.Partition
		}
		ins = append(ins, metrics.BrokerInput{Input: in.Input, Partition: part, Next: in.Next, LogEnd: in.LogEnd})
	}
	sinks := make([]metrics.BrokerSink, 0, len(pos.Sinks))
	for _, s := range pos.Sinks {
		sinks = append(sinks, metrics.BrokerSink{Output: s.Output, Acked: s.Acked, Lag: s.Lag})
	}
	return ins, sinks
}
