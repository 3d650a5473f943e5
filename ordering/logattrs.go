package ordering

import (
	"log/slog"
	"time"
)

// LogAttrs are the log fields of what MergeJSONL did, as cdclog merge's
// summary line gives them: shards, records (written), elapsed (the wall
// time the caller measured, to the millisecond), then, each only when not
// zero, skipped, quarantined with quarantine (the name of the file the
// lines went to) and out_of_order.
func (s MergeStats) LogAttrs(elapsed time.Duration, quarantine string) []slog.Attr {
	attrs := []slog.Attr{slog.Int("shards", s.Shards), slog.Int64("records", s.Written),
		slog.Duration("elapsed", elapsed.Round(time.Millisecond))}
	if s.Skipped > 0 {
		attrs = append(attrs, slog.Int64("skipped", s.Skipped))
	}
	if s.Quarantined > 0 {
		attrs = append(attrs, slog.Int64("quarantined", s.Quarantined), slog.String("quarantine", quarantine))
	}
	if s.OutOfOrder > 0 {
		attrs = append(attrs, slog.Int64("out_of_order", s.OutOfOrder))
	}
	return attrs
}

// Flawed reports whether the merge met lines it did not write as it read
// them: lines skipped or quarantined, or records out of order in their
// shard. cdclog merge then logs its summary as a warning.
func (s MergeStats) Flawed() bool {
	return s.Skipped+s.Quarantined+s.OutOfOrder > 0
}
