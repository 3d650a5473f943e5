package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/cdclog/cdclog/recovery"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is one processor's metrics in a registry of their own. It is
// the processor's recovery.Observer (pass it as Options.Observer), and
// reads the gauges from the processor given to Watch. Its methods are
// safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	read, requests, commits, output prometheus.Counter
	accepted, duplicate, stale      prometheus.Counter
	skipped, quarantined, refused   prometheus.Counter
	commitSeconds                   prometheus.Histogram
	dbSync, outSync                 prometheus.Observer

	proc    atomic.Pointer[recovery.Processor]
	brokers atomic.Pointer[Brokers]
	log     *slog.Logger
}

// durationBuckets spans 100 µs to 6.5 s in powers of two: a commit on a
// fast disk takes a few hundred µs, one on a loaded disk tens of ms.
var durationBuckets = prometheus.ExponentialBuckets(100e-6, 2, 17)

// New returns the metrics, every counter at zero, with no processor
// watched yet (the gauges are absent until Watch). Errors met while
// reading the processor at a scrape go to log (nil: slog.Default()); the
// scrape then serves the other metrics.
func New(log *slog.Logger) *Metrics {
	if log == nil {
		log = slog.Default()
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: log}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		m.reg.MustRegister(c)
		return c
	}
	m.read = counter("cdclog_messages_read_total", "Messages and undecodable inputs in the requests (ingest's batches, serve's appends) committed since the process started.")
	m.requests = counter("cdclog_requests_total", "Requests committed since the process started: ingest's batches of input, serve's appends.")
	m.commits = counter("cdclog_commits_total", "Group commits (bbolt transactions) since the process started.")
	m.output = counter("cdclog_output_records_total", "Output records released since the process started.")
	outcomes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cdclog_messages_total",
		Help: "Messages committed since the process started, by outcome: accepted, duplicate, stale (below the frontier), skipped, quarantined, refused (stopped a request under --on-error fail)."},
		[]string{"outcome"})
	m.reg.MustRegister(outcomes)
	m.accepted = outcomes.WithLabelValues("accepted")
	m.duplicate = outcomes.WithLabelValues("duplicate")
	m.stale = outcomes.WithLabelValues("stale")
	m.skipped = outcomes.WithLabelValues("skipped")
	m.quarantined = outcomes.WithLabelValues("quarantined")
	m.refused = outcomes.WithLabelValues("refused")
	m.commitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "cdclog_commit_duration_seconds",
		Help:    "How long a group commit took: its bbolt transaction, with its wait for the output file's fsync.",
		Buckets: durationBuckets})
	m.reg.MustRegister(m.commitSeconds)
	syncs := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cdclog_fsync_duration_seconds",
		Help:    `Fsync latency: file="database" is bbolt writing a commit's pages and meta page, each with its fdatasync; file="output" is one fsync of the output file.`,
		Buckets: durationBuckets}, []string{"file"})
	m.reg.MustRegister(syncs)
	m.dbSync, m.outSync = syncs.WithLabelValues("database"), syncs.WithLabelValues("output")
	m.reg.MustRegister(&gauges{m: m}, brokerGauges{f: &m.brokers}, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Committed counts one committed batch (recovery.Observer).
func (m *Metrics) Committed(b recovery.BatchStats) {
	t := &b.Totals
	m.read.Add(float64(b.Messages))
	m.requests.Add(float64(b.Requests))
	m.commits.Inc()
	m.output.Add(float64(t.Output))
	m.accepted.Add(float64(t.Accepted))
	m.duplicate.Add(float64(t.Duplicates))
	m.stale.Add(float64(t.Stale))
	m.skipped.Add(float64(t.Skipped))
	m.quarantined.Add(float64(t.Quarantined))
	m.refused.Add(float64(b.Refused))
	m.commitSeconds.Observe(b.Commit.Seconds())
	m.dbSync.Observe(b.Write.Seconds())
}

// OutputSynced records one fsync of the output file (recovery.Observer).
func (m *Metrics) OutputSynced(d time.Duration) { m.outSync.Observe(d.Seconds()) }

// Watch makes the gauges read p at each scrape, from now on. Watch(nil)
// stops that.
func (m *Metrics) Watch(p *recovery.Processor) { m.proc.Store(p) }

// Registry returns the registry that holds the metrics, to add others to
// or to gather from.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler returns the /metrics handler: the registry in Prometheus's
// exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg,
		ErrorHandling: promhttp.ContinueOnError, ErrorLog: printer{m.log}})
}

// printer is promhttp's error log on a slog.Logger.
type printer struct{ log *slog.Logger }

func (p printer) Println(v ...any) { p.log.Warn("metrics: " + fmt.Sprint(v...)) }
