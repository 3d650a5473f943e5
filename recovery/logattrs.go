package recovery

import (
	"log/slog"

	"github.com/cdclog/cdclog/internal/logattr"
)

// LogAttrs are the log fields that say where the stream stands, named as
// in Status's JSON: frontier, complete, waiting and reason, or only
// complete=true once every time is. cdclog ingest and serve end their
// summary line with them.
func (s *Status) LogAttrs() []slog.Attr {
	return logattr.Frontier(s.Frontier, s.Complete, s.Waiting, s.Reason)
}

// LogAttrs are the log fields that say what became of the messages:
// accepted, duplicates, stale, skipped, quarantined, and records_out (the
// output records released), as cdclog ingest and serve log them.
func (r *Result) LogAttrs() []slog.Attr {
	return []slog.Attr{slog.Int("accepted", r.Accepted), slog.Int("duplicates", r.Duplicates),
		slog.Int("stale", r.Stale), slog.Int("skipped", r.Skipped), slog.Int("quarantined", r.Quarantined),
		slog.Int("records_out", r.Output)}
}
