package server

import (
	"testing"

	"github.com/cdclog/cdclog/internal/optiontest"
)

func TestOptionsValidateRefusesWhatNoBodyFits(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string // "" when valid
	}{
		{"zero", Options{}, ""},
		{"in flight equal to body", Options{MaxBody: 1 << 20, MaxInFlight: 1 << 20}, ""},
		{"in flight above the default body", Options{MaxInFlight: DefaultMaxBody}, ""},
		{"negative body", Options{MaxBody: -1}, "--max-body -1: an append could hold no message"},
		{"negative in flight", Options{MaxInFlight: -1}, "--max-inflight -1: no body could be held"},
		{"in flight below body", Options{MaxBody: 2 << 20, MaxInFlight: 1 << 20},
			"--max-inflight 1MiB is less than --max-body 2MiB: no body could be held"},
		{"in flight below the default body", Options{MaxInFlight: 1000},
			"--max-inflight 1000 is less than --max-body 64MiB: no body could be held"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !optiontest.Check(t, tt.opts.Validate(), tt.want) {
				return
			}
			if s, nerr := New(nil, tt.opts); s != nil || nerr == nil || nerr.Error() != tt.want {
				t.Fatalf("New = %v, %v; want no server and %q", s, nerr, tt.want)
			}
		})
	}
}
