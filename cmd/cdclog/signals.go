package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signalStop turns the first SIGINT or SIGTERM into a graceful stop (its
// context ends: the command stops reading and commits what it read) and
// the second into an exit at once.
type signalStop struct {
	ch   chan os.Signal
	done chan struct{}
	mu   sync.Mutex
	got  os.Signal
}

// stopOnSignal returns a context that ends at the first signal.
func stopOnSignal(parent context.Context, e *env) (context.Context, *signalStop) {
	ctx, cancel := context.WithCancel(parent)
	s := &signalStop{ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer cancel()
		select {
		case sig := <-s.ch:
			s.mu.Lock()
			s.got = sig
			s.mu.Unlock()
			e.log.Info("stopping: committing what was read; a second signal exits at once", "signal", signalName(sig))
			cancel()
		case <-s.done:
			return
		}
		select {
		case sig := <-s.ch:
			e.log.Warn("second signal: exiting now; the next run recovers what was committed", "signal", signalName(sig))
			os.Exit(signalExitCode(sig))
		case <-s.done:
		}
	}()
	return ctx, s
}

// release stops listening for signals.
func (s *signalStop) release() {
	signal.Stop(s.ch)
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// received returns the signal that stopped the run, or nil.
func (s *signalStop) received() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// outcome is the command's result once it has stopped: a stop by SIGTERM
// is a success, one by SIGINT exits 130, as shells expect; any other
// error stands.
func (s *signalStop) outcome(err error) error {
	sig := s.received()
	if sig == nil || err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if sig == syscall.SIGTERM {
		return nil
	}
	return withCode(signalExitCode(sig), fmt.Errorf("interrupted (%s): stopped after committing what was read", signalName(sig)))
}

// signalExitCode is 128 plus the signal's number, as shells report it.
func signalExitCode(sig os.Signal) int {
	if n, ok := sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitFailure
}

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return sig.String()
}
