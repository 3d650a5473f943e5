package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// signalContext returns a context that ends at the first SIGINT or
// SIGTERM, for a command that stops cleanly when asked. A second signal
// exits the process at once, with 128 plus the signal's number (130 for
// SIGINT, 143 for SIGTERM): the next run recovers from the last commit.
// stop releases the signals.
func signalContext(parent context.Context, e *env, cmd string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			e.log.Info(cmd+": stopping; a second signal exits at once", "signal", s.String())
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(e.stderr, "cdclog: %s: second signal (%s): exiting at once; the next run recovers from the last commit\n", cmd, s)
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
