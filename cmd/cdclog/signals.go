package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/cdclog/cdclog/internal/sigstop"
)

// signalStop turns the first SIGINT or SIGTERM into a graceful stop (its
// context ends: the command stops reading and commits what it read) and
// the second into an exit at once (package sigstop).
type signalStop struct{ *sigstop.Stop }

// stopOnSignal returns a context that ends at the first signal.
func stopOnSignal(parent context.Context, e *env) (context.Context, signalStop) {
	ctx, s := sigstop.Notify(parent, e.log)
	return ctx, signalStop{s}
}

func (s signalStop) release() { s.Release() }

// outcome is the command's result once it has stopped: a stop by SIGTERM
// is a success, one by SIGINT exits 130, as shells expect; any other
// error stands.
func (s signalStop) outcome(err error) error {
	sig := s.Received()
	if sig == nil || err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if sig == syscall.SIGTERM {
		return nil
	}
	return withCode(sigstop.ExitCode(sig), fmt.Errorf("interrupted (%s): stopped after committing what was read", sigstop.Name(sig)))
}
