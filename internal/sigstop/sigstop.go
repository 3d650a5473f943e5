package sigstop

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// A Stop listens for SIGINT and SIGTERM from Notify until Release.
type Stop struct {
	ch   chan os.Signal
	done chan struct{}
	mu   sync.Mutex
	got  os.Signal
}

// Notify returns a context that ends at the first SIGINT or SIGTERM, with
// a line on log saying so; a second signal logs a warning and exits the
// process with ExitCode of that signal.
func Notify(parent context.Context, log *slog.Logger) (context.Context, *Stop) {
	ctx, cancel := context.WithCancel(parent)
	s := &Stop{ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer cancel()
		select {
		case sig := <-s.ch:
			s.mu.Lock()
			s.got = sig
			s.mu.Unlock()
			log.Info("stopping: committing what was read; a second signal exits at once", "signal", Name(sig))
			cancel()
		case <-s.done:
			return
		}
		select {
		case sig := <-s.ch:
			log.Warn("second signal: exiting now; the next run recovers what was committed", "signal", Name(sig))
			os.Exit(ExitCode(sig))
		case <-s.done:
		}
	}()
	return ctx, s
}

// Release stops listening for signals; the context Notify returned ends.
func (s *Stop) Release() {
	signal.Stop(s.ch)
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// Received returns the signal that stopped the run, or nil.
func (s *Stop) Received() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// ExitCode is 128 plus the signal's number, as shells report it (1 for a
// signal that has no number).
func ExitCode(sig os.Signal) int {
	if n, ok := sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// Name is the signal's name as operators write it: "SIGTERM", "SIGINT".
func Name(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return sig.String()
}
