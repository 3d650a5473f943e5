package clean

import (
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/optiontest"
)

func TestOptionsValidateRefusesWhatCannotWork(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string // "" when valid
	}{
		{"zero", Options{}, ""},
		{"skip", Options{OnError: cdc.Skip}, ""},
		{"quarantine with a writer", Options{OnError: cdc.Quarantine, Quarantine: &rejects{}}, ""},
		{"quarantine without a writer", Options{OnError: cdc.Quarantine},
			"--on-error quarantine needs --quarantine FILE (there is no database to keep rejected messages in)"},
		{"writer under fail", Options{Quarantine: &rejects{}}, "--quarantine is only used with --on-error quarantine"},
		{"writer under skip", Options{OnError: cdc.Skip, Quarantine: &rejects{}}, "--quarantine is only used with --on-error quarantine"},
		{"unknown policy", Options{OnError: 9}, "--on-error policy(9) is not fail, skip or quarantine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !optiontest.Check(t, tt.o.Validate(), tt.want) {
				return
			}
			// Stream refuses the same options the same way, writing nothing.
			out, _, serr := run(t, lines(`{"progress":{"lower":0,"upper":1,"counts":[]}}`), tt.o)
			if serr == nil || serr.Error() != tt.want || out != "" {
				t.Fatalf("Stream = %q, %v; want nothing and %q", out, serr, tt.want)
			}
		})
	}
}
