package main

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// progressLogger writes a one-line progress log every interval, for a
// long run whose stderr is not a terminal (a service's log): the
// terminal's progress display, as log lines. A nil *progressLogger does
// nothing.
type progressLogger struct {
	quit chan struct{}
	wg   sync.WaitGroup
}

// startProgressLog logs msg with attrs() every interval, or returns nil
// when that is off: --quiet, an interval of 0, or stderr a terminal (the
// display is drawn there instead).
func startProgressLog(e *env, msg string, every time.Duration, attrs func() []slog.Attr) *progressLogger {
	if e.quiet || every <= 0 || e.interactive() {
		return nil
	}
	pl := &progressLogger{quit: make(chan struct{})}
	pl.wg.Add(1)
	go func() {
		defer pl.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				e.log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs()...)
			case <-pl.quit:
				return
			}
		}
	}()
	return pl
}

// stop ends the log, waiting for a line being written.
func (pl *progressLogger) stop() {
	if pl == nil {
		return
	}
	close(pl.quit)
	pl.wg.Wait()
}
