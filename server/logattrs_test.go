package server

import (
	"log/slog"
	"testing"

	"github.com/cdclog/cdclog/recovery"
)

func TestStatsLogAttrsCountTheAppendsThenTheirMessages(t *testing.T) {
	s := Stats{Appends: 3, Refused: 1, Unanswered: 2, Messages: 9, Totals: recovery.Result{Accepted: 7, Duplicates: 2, Output: 4}}
	want := "[appends=3 refused=1 unanswered=2 messages=9 accepted=7 duplicates=2 stale=0 skipped=0 quarantined=0 records_out=4]"
	if got := slog.GroupValue(s.LogAttrs()...).String(); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
