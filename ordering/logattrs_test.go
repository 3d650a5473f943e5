package ordering

import (
	"log/slog"
	"testing"
	"time"
)

func TestMergeStatsLogAttrsNameOnlyWhatHappened(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      MergeStats
		q      string
		want   string
		flawed bool
	}{
		{"clean", MergeStats{Shards: 2, Written: 5}, "", "[shards=2 records=5 elapsed=1.235s]", false},
		{"skipped", MergeStats{Shards: 1, Written: 3, Skipped: 2}, "", "[shards=1 records=3 elapsed=1.235s skipped=2]", true},
		{"quarantined and out of order", MergeStats{Shards: 3, Written: 4, Quarantined: 1, OutOfOrder: 6}, "q.jsonl",
			"[shards=3 records=4 elapsed=1.235s quarantined=1 quarantine=q.jsonl out_of_order=6]", true},
		{"out of order only", MergeStats{Shards: 1, OutOfOrder: 1}, "", "[shards=1 records=0 elapsed=1.235s out_of_order=1]", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slog.GroupValue(tc.s.LogAttrs(1234567*time.Microsecond, tc.q)...).String()
			if got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			if f := tc.s.Flawed(); f != tc.flawed {
				t.Errorf("Flawed() = %v, want %v", f, tc.flawed)
			}
		})
	}
}
