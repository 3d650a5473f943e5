package metrics

import (
	"log/slog"

	"github.com/cdclog/cdclog/recovery"
)

// Endpoint is Metrics served on an address until Close, as `cdclog
// ingest --metrics ADDR` runs them. A nil *Endpoint, what Listen returns
// for no address, does nothing: its Observer is nil, and Watch and Close
// return at once.
type Endpoint struct {
	m    *Metrics
	stop func()
}

// Listen serves new Metrics (logging to log) on addr, as ListenAndServe
// does, an empty addr serving none (nil, nil). Its errors are
// ListenAndServe's: an addr that is not an address wraps ErrAddress, a
// port in use names it.
func Listen(addr string, log *slog.Logger) (*Endpoint, error) {
	if addr == "" {
		return nil, nil
	}
	m := New(log)
	stop, err := m.ListenAndServe(addr)
	if err != nil {
		return nil, err
	}
	return &Endpoint{m: m, stop: stop}, nil
}

// Observer returns what a processor's Options.Observer should be for the
// endpoint's counters: its Metrics, or nil for a nil Endpoint (a nil
// *Metrics in the interface would not be a nil Observer).
func (e *Endpoint) Observer() recovery.Observer {
	if e == nil {
		return nil
	}
	return e.m
}

// Watch makes the gauges read p (Metrics.Watch) and, when brokers is not
// nil, the broker positions (Metrics.WatchBrokers; relay.BrokerMetrics
// reads them from p's cursors).
func (e *Endpoint) Watch(p *recovery.Processor, brokers Brokers) {
	if e == nil {
		return
	}
	e.m.Watch(p)
	if brokers != nil {
		e.m.WatchBrokers(brokers)
	}
}

// Close stops serving, waiting a second at most for the scrapes in
// flight.
func (e *Endpoint) Close() {
	if e != nil {
		e.stop()
	}
}
