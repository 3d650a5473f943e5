package main

import (
	"context"
	"log/slog"

	"github.com/cdclog/cdclog/demangle"
)

// frontierAttrs are the log fields that say where a stream stands, named
// as in 'inspect status --json': frontier (the number), complete (the
// flag), waiting ("progress" or "updates": what the first incomplete time
// lacks) and reason (the sentence). Once the stream is complete only
// complete=true remains.
func frontierAttrs(frontier uint64, complete bool, waiting, reason string) []slog.Attr {
	if complete {
		return []slog.Attr{slog.Bool("complete", true)}
	}
	return []slog.Attr{slog.Uint64("frontier", frontier), slog.Bool("complete", false),
		slog.String("waiting", waiting), slog.String("reason", reason)}
}

// stuckAttrs are frontierAttrs for an in-memory receiver's state.
func stuckAttrs(st demangle.Stuck) []slog.Attr {
	waiting := "updates"
	if !st.Covered {
		waiting = "progress"
	}
	return frontierAttrs(st.Time, st.Done, waiting, st.String())
}

// logSummary writes a command's one summary line at info level: a
// successful run writes nothing else unless asked to (--log-level debug).
func logSummary(e *env, msg string, attrs ...slog.Attr) {
	e.log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
}
