package metrics

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// BrokerInput is where reading one partition of a broker input stands:
// Next is the next offset (Kafka) or stream sequence (JetStream) to read,
// LogEnd the one after the partition's last message as the source last saw
// it (nil when unknown). Partition is -1 for JetStream, which has one
// order.
type BrokerInput struct {
	Input     string
	Partition int32
	Next      int64
	LogEnd    *int64
}

// BrokerSink is how far a broker output is known to hold the output log:
// Acked is the last record on it, Lag the committed records after it.
type BrokerSink struct {
	Output string
	Acked  uint64
	Lag    uint64
}

// Brokers reads the broker positions at scrape time: the inputs' and the
// sinks'. It may return what it could read with an error.
type Brokers func() ([]BrokerInput, []BrokerSink, error)

// WatchBrokers makes the broker gauges read f at each scrape:
//
//	cdclog_broker_input_next_offset{input,partition}      where reading resumes
//	cdclog_broker_input_log_end_offset{input,partition}   the log's end as last seen
//	cdclog_broker_input_lag_messages{input,partition}     the messages between them
//	cdclog_broker_sink_acked_seq{output}                  the last record on the output
//	cdclog_broker_sink_lag_records{output}                committed records it lacks
//
// (partition is "" for JetStream). WatchBrokers(nil) stops that.
func (m *Metrics) WatchBrokers(f Brokers) {
	m.brokers.Store(&f)
}

var (
	inNextDesc  = gaugeDesc("cdclog_broker_input_next_offset", "The next offset (Kafka) or stream sequence (JetStream) a broker input reads, as committed.", "input", "partition")
	inEndDesc   = gaugeDesc("cdclog_broker_input_log_end_offset", "The offset or sequence after the partition's last message, as the source last saw it.", "input", "partition")
	inLagDesc   = gaugeDesc("cdclog_broker_input_lag_messages", "Messages in the partition past the committed position, as of the log end last seen.", "input", "partition")
	sinkAckDesc = gaugeDesc("cdclog_broker_sink_acked_seq", "The sequence number of the last output record known to be on the broker output.", "output")
	sinkLagDesc = gaugeDesc("cdclog_broker_sink_lag_records", "Committed output records the broker output does not hold yet.", "output")
)

// brokerGauges is the collector of the broker positions.
type brokerGauges struct{ f *atomic.Pointer[Brokers] }

func (g brokerGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{inNextDesc, inEndDesc, inLagDesc, sinkAckDesc, sinkLagDesc} {
		ch <- d
	}
}

func (g brokerGauges) Collect(ch chan<- prometheus.Metric) {
	fp := g.f.Load()
	if fp == nil || *fp == nil {
		return
	}
	inputs, sinks, err := (*fp)()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(inNextDesc, err)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, in := range inputs {
		part := ""
		if in.Partition >= 0 {
			part = strconv.Itoa(int(in.Partition))
		}
		gauge(inNextDesc, float64(in.Next), in.Input, part)
		if in.LogEnd != nil {
			gauge(inEndDesc, float64(*in.LogEnd), in.Input, part)
			gauge(inLagDesc, float64(max(*in.LogEnd-in.Next, 0)), in.Input, part)
		}
	}
	for _, s := range sinks {
		gauge(sinkAckDesc, float64(s.Acked), s.Output)
		gauge(sinkLagDesc, float64(s.Lag), s.Output)
	}
}
