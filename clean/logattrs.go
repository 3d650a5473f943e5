package clean

import (
	"log/slog"

	"github.com/cdclog/cdclog/internal/logattr"
)

// LogAttrs are the log fields of what Stream did, as cdclog demangle's
// summary line gives them: messages, records_out, duplicates, stale,
// rejected, pending_times, pending_updates, pending_beyond_memory (when
// any), then where the frontier ended and what it waits for (frontier,
// complete, waiting, reason; only complete=true once every time is), named
// as in 'cdclog inspect status --json'.
func (r *Result) LogAttrs() []slog.Attr {
	attrs := []slog.Attr{slog.Uint64("messages", r.Messages), slog.Uint64("records_out", r.Records),
		slog.Uint64("duplicates", r.Stats.Duplicates), slog.Uint64("stale", r.Stats.Stale), slog.Uint64("rejected", r.Rejected),
		slog.Int("pending_times", r.PendingTimes), slog.Int("pending_updates", r.PendingUpdates)}
	if r.PendingBeyond > 0 {
		attrs = append(attrs, slog.Int64("pending_beyond_memory", r.PendingBeyond))
	}
	waiting := "updates"
	if !r.Stuck.Covered {
		waiting = "progress"
	}
	return append(attrs, logattr.Frontier(r.Stuck.Time, r.Stuck.Done, waiting, r.Stuck.String())...)
}

// LogAttrs are the log fields of what Convert did, as cdclog convert's
// summary line gives them: updates_in, finishes, updates_out. The updates
// written without progress (Unfinished) are a warning of their own.
func (r *ConvertResult) LogAttrs() []slog.Attr {
	return []slog.Attr{slog.Uint64("updates_in", r.UpdatesIn), slog.Uint64("finishes", r.Finishes), slog.Uint64("updates_out", r.UpdatesOut)}
}
