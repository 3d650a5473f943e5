package progress

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Logger writes a one-line progress log every interval, for a long run
// whose stderr is not a terminal (a service's log): the terminal's
// display, as log lines. A nil *Logger does nothing.
type Logger struct {
	quit chan struct{}
	wg   sync.WaitGroup
}

// StartLog logs msg at info level with attrs() every interval until Stop,
// or returns nil when every is 0 or less.
func StartLog(log *slog.Logger, msg string, every time.Duration, attrs func() []slog.Attr) *Logger {
	if every <= 0 {
		return nil
	}
	pl := &Logger{quit: make(chan struct{})}
	pl.wg.Add(1)
	go func() {
		defer pl.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs()...)
			case <-pl.quit:
				return
			}
		}
	}()
	return pl
}

// Stop ends the log, waiting for a line being written.
func (pl *Logger) Stop() {
	if pl == nil {
		return
	}
	close(pl.quit)
	pl.wg.Wait()
}
