package main

import (
	"errors"

	"github.com/cdclog/cdclog/metrics"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/relay"
	"github.com/urfave/cli/v2"
)

// metricsFlag is ingest's --metrics.
func metricsFlag() cli.Flag {
	return &cli.StringFlag{Name: "metrics", Usage: "serve Prometheus metrics on `ADDR`/metrics while ingest runs; " +
		":PORT listens on loopback only, 0.0.0.0:PORT on every interface, where anyone who reaches the port can read them (no authentication)"}
}

// metricsEndpoint is ingest's --metrics: the metrics and the HTTP server
// that serves them. A nil one (no --metrics) does nothing.
type metricsEndpoint struct {
	m    *metrics.Metrics
	stop func()
}

// startMetrics serves the metrics on addr (metrics.ListenAndServe); ""
// serves none. A port in use is an error before anything is ingested.
func startMetrics(e *env, addr string) (*metricsEndpoint, error) {
	if addr == "" {
		return nil, nil
	}
	m := metrics.New(e.log)
	stop, err := m.ListenAndServe(addr)
	if errors.Is(err, metrics.ErrAddress) {
		return nil, usageError("--metrics %v", err)
	}
	if err != nil {
		return nil, withCode(exitFailure, err)
	}
	return &metricsEndpoint{m: m, stop: stop}, nil
}

// observer returns the processor's Observer: nil without --metrics.
func (me *metricsEndpoint) observer() recovery.Observer {
	if me == nil {
		return nil
	}
	return me.m
}

// watch makes the gauges read p, and its broker positions (decoded from
// its cursors as 'inspect status' does).
func (me *metricsEndpoint) watch(p *recovery.Processor) {
	if me == nil {
		return
	}
	me.m.Watch(p)
	me.m.WatchBrokers(relay.BrokerMetrics(p))
}

// close stops serving.
func (me *metricsEndpoint) close() {
	if me != nil {
		me.stop()
	}
}
