package main

import (
	"context"
	"log/slog"
)

// logSummary writes a command's one summary line at info level: a
// successful run writes nothing else unless asked to (--log-level debug).
func logSummary(e *env, msg string, attrs ...slog.Attr) {
	e.log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
}
