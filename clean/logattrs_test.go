package clean

import (
	"log/slog"
	"testing"

	"github.com/cdclog/cdclog/demangle"
)

func TestResultLogAttrsEndWithWhereTheFrontierWaits(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"complete", Result{Messages: 10, Records: 8, Stats: demangle.Stats{Duplicates: 2}, Stuck: demangle.Stuck{Done: true}},
			"[messages=10 records_out=8 duplicates=2 stale=0 rejected=0 pending_times=0 pending_updates=0 complete=true]"},
		{"waiting for progress, some beyond memory", Result{Messages: 5, PendingTimes: 1, PendingUpdates: 3, PendingBeyond: 4, Stuck: demangle.Stuck{Time: 7}},
			"[messages=5 records_out=0 duplicates=0 stale=0 rejected=0 pending_times=1 pending_updates=3 pending_beyond_memory=4 frontier=7 complete=false waiting=progress reason=" +
				demangle.Stuck{Time: 7}.String() + "]"},
		{"waiting for updates", Result{Stuck: demangle.Stuck{Time: 3, Covered: true, Expected: 2, Held: 1}},
			"[messages=0 records_out=0 duplicates=0 stale=0 rejected=0 pending_times=0 pending_updates=0 frontier=3 complete=false waiting=updates reason=" +
				demangle.Stuck{Time: 3, Covered: true, Expected: 2, Held: 1}.String() + "]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := slog.GroupValue(tc.r.LogAttrs()...).String(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestConvertResultLogAttrsCountInAndOut(t *testing.T) {
	r := ConvertResult{UpdatesIn: 7, Finishes: 2, UpdatesOut: 4, Unfinished: 1, UnfinishedFrom: 9}
	if got, want := slog.GroupValue(r.LogAttrs()...).String(), "[updates_in=7 finishes=2 updates_out=4]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
