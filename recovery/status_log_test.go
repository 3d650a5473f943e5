package recovery

import (
	"log/slog"
	"testing"
)

func TestStatusLogAttrsSayWhatTheFrontierWaitsForUntilComplete(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   Status
		want string
	}{
		{"waiting", Status{Frontier: 12, Waiting: "progress", Reason: "no progress statement covers time 12"},
			"[frontier=12 complete=false waiting=progress reason=no progress statement covers time 12]"},
		{"complete", Status{Frontier: 99, Complete: true, Waiting: "progress"}, "[complete=true]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := slog.GroupValue(tc.st.LogAttrs()...).String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestResultLogAttrsCountEveryOutcome(t *testing.T) {
	r := Result{Accepted: 1, Duplicates: 2, Stale: 3, Skipped: 4, Quarantined: 5, Applied: 15, Output: 6}
	want := "[accepted=1 duplicates=2 stale=3 skipped=4 quarantined=5 records_out=6]"
	if got := slog.GroupValue(r.LogAttrs()...).String(); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
