package main

import (
	"errors"

	"github.com/cdclog/cdclog/metrics"
	"github.com/urfave/cli/v2"
)

// metricsFlag is ingest's --metrics.
func metricsFlag() cli.Flag {
	return &cli.StringFlag{Name: "metrics", Usage: "serve Prometheus metrics on `ADDR`/metrics while ingest runs; " +
		":PORT listens on loopback only, 0.0.0.0:PORT on every interface, where anyone who reaches the port can read them (no authentication)"}
}

// startMetrics serves the metrics on addr (metrics.Listen); "" serves
// none, a nil endpoint. A port in use is an error before anything is
// ingested.
func startMetrics(e *env, addr string) (*metrics.Endpoint, error) {
	me, err := metrics.Listen(addr, e.log)
	if errors.Is(err, metrics.ErrAddress) {
		return nil, usageError("--metrics %v", err)
	}
	if err != nil {
		return nil, withCode(exitFailure, err)
	}
	return me, nil
}
