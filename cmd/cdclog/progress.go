package main

import (
	"github.com/cdclog/cdclog/inspect"
	"log/slog"
	"time"

	"github.com/cdclog/cdclog/internal/progress"
)

// newProgress returns a display of o on e's stderr, or nil (which does
// nothing) when stderr is not a terminal, --quiet is set, or the stream
// goes to stdout and stdout is the terminal too (see env.interactive).
func newProgress(e *env, o progress.Options) *progress.Bar {
	if !e.interactive() {
		return nil
	}
	return progress.New(e.stderr, o)
}

// newInputProgress returns the display of a run over the named inputs
// ("-" or "" is stdin; none means stdin), or nil when it is off.
func newInputProgress(e *env, label string, names []string) *progress.Input {
	if !e.interactive() {
		return nil
	}
	return progress.NewInput(e.stderr, label, names)
}

// startProgressLog logs msg with attrs() every interval, or returns nil
// when that is off: --quiet, an interval of 0, or stderr a terminal (the
// display is drawn there instead).
func startProgressLog(e *env, msg string, every time.Duration, attrs func() []slog.Attr) *progress.Logger {
	if e.quiet || e.interactive() {
		return nil
	}
	return progress.StartLog(e.log, msg, every, attrs)
}

// streamOptions are the options of a stream written to stdout, its
// progress drawn as a display labelled label (progress.Tally) unless
// stdout is the terminal too; done ends the display.
func streamOptions(e *env, label string) (o inspect.StreamOptions, done func()) {
	o = inspect.StreamOptions{Format: e.outFormat, Log: e.log}
	e.stdoutStream = true
	if !e.interactive() {
		return o, func() {}
	}
	t := progress.NewTally(e.stderr, progress.Options{Label: label, Unit: "record"})
	o.Progress = t.Report
	return o, t.Finish
}
