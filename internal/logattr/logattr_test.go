package logattr

import (
	"log/slog"
	"testing"
)

func TestFrontierNamesTheWaitUntilTheStreamIsComplete(t *testing.T) {
	for _, tc := range []struct {
		name     string
		complete bool
		want     string
	}{
		{"incomplete", false, "[frontier=7 complete=false waiting=updates reason=time 7 lacks updates]"},
		{"complete", true, "[complete=true]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slog.GroupValue(Frontier(7, tc.complete, "updates", "time 7 lacks updates")...).String()
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
