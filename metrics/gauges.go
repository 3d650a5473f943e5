package metrics

import (
	"errors"
	"fmt"
	"time"

	"github.com/cdclog/cdclog/recovery"
	"github.com/prometheus/client_golang/prometheus"
)

// gauges is the collector of the figures read at scrape time from the
// watched processor.
type gauges struct{ m *Metrics }

func gaugeDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	upDesc       = gaugeDesc("cdclog_up", "1 while the processor runs; 0 once it has stopped after a storage failure, or closed.")
	frontierDesc = gaugeDesc("cdclog_frontier", "The frontier: every time below it is complete and emitted (absent once the stream is complete).")
	completeDesc = gaugeDesc("cdclog_stream_complete", "1 once every time has been emitted.")
	pendTimes    = gaugeDesc("cdclog_pending_times", "Incomplete times held, as of the last commit.")
	pendUpdates  = gaugeDesc("cdclog_pending_updates", "Updates held for incomplete times, as of the last commit.")
	nextSeqDesc  = gaugeDesc("cdclog_output_next_seq", "The sequence number the next output record will get (the first is 1).")
	lagDesc      = gaugeDesc("cdclog_consumer_lag_records", "Output records committed past the consumer's committed position.", "consumer")
	walEntries   = gaugeDesc("cdclog_wal_entries", "Entries in the write-ahead log.")
	walBytes     = gaugeDesc("cdclog_wal_bytes", "Bytes of the write-ahead log (keys and values).")
	fileBytes    = gaugeDesc("cdclog_db_file_bytes", "Size of the database file.")
	lastCommit   = gaugeDesc("cdclog_last_commit_timestamp_seconds", "When the last checkpoint was written, in seconds since the Unix epoch.")
)

// Describe sends every gauge's description.
func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{upDesc, frontierDesc, completeDesc, pendTimes, pendUpdates,
		nextSeqDesc, lagDesc, walEntries, walBytes, fileBytes, lastCommit} {
		ch <- d
	}
}

// Collect reads the watched processor. Once it is closed only cdclog_up
// (0) is left.
func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	p := g.m.proc.Load()
	if p == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	up := 0.0
	if p.Err() == nil {
		up = 1
	}
	gauge(upDesc, up)
	st, err := p.Status()
	if err != nil {
		if !errors.Is(err, recovery.ErrClosed) {
			ch <- prometheus.NewInvalidMetric(frontierDesc, fmt.Errorf("read status: %w", err))
		}
		return
	}
	if st.Complete {
		gauge(completeDesc, 1)
	} else {
		gauge(completeDesc, 0)
		gauge(frontierDesc, float64(st.Frontier))
	}
	gauge(pendTimes, float64(st.PendingTimes))
	gauge(pendUpdates, float64(st.PendingUpdates))
	end := st.OutputRecords + 1
	gauge(nextSeqDesc, float64(end))
	gauge(walEntries, float64(st.WAL.Entries))
	gauge(walBytes, float64(st.WAL.Bytes))
	gauge(fileBytes, float64(st.FileBytes))
	if t, err := time.Parse(time.RFC3339Nano, st.LastCheckpoint); err == nil {
		gauge(lastCommit, float64(t.UnixNano())/1e9)
	}
	consumerLag(ch, p, end, gauge)
}

// consumerLag reports each consumer's lag behind end.
func consumerLag(ch chan<- prometheus.Metric, p *recovery.Processor, end uint64, gauge func(*prometheus.Desc, float64, ...string)) {
	pos, err := p.ConsumerPositions()
	if err != nil {
		if !errors.Is(err, recovery.ErrClosed) {
			ch <- prometheus.NewInvalidMetric(lagDesc, err)
		}
		return
	}
	for name, next := range pos {
		gauge(lagDesc, float64(end-min(next, end)), name)
	}
}
