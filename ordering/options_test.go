package ordering

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/optiontest"
)

func TestMergeOptionsValidateRefusesWhatCannotWork(t *testing.T) {
	tests := []struct {
		name string
		opts MergeOptions
		want string // "" when valid
	}{
		{"zero", MergeOptions{}, ""},
		{"skip", MergeOptions{OnError: cdc.Skip}, ""},
		{"quarantine with a writer", MergeOptions{OnError: cdc.Quarantine, Quarantine: &rejectList{}}, ""},
		{"quarantine without a writer", MergeOptions{OnError: cdc.Quarantine},
			"--on-error quarantine needs --quarantine FILE: merge has no database to keep rejected lines in"},
		{"writer under fail", MergeOptions{Quarantine: &rejectList{}}, "--quarantine is only used with --on-error quarantine"},
		{"writer under skip", MergeOptions{OnError: cdc.Skip, Quarantine: &rejectList{}}, "--quarantine is only used with --on-error quarantine"},
		{"unknown policy", MergeOptions{OnError: 9}, "--on-error policy(9) is not fail, skip or quarantine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !optiontest.Check(t, tt.opts.Validate(), tt.want) {
				return
			}
			// MergeJSONL refuses the same options the same way, reading nothing.
			r := &countingReader{}
			_, merr := MergeJSONL(context.Background(), []Shard{{Name: "a", R: r}}, io.Discard, tt.opts)
			if merr == nil || merr.Error() != tt.want || r.reads != 0 {
				t.Fatalf("MergeJSONL = %v after %d reads, want %q before any", merr, r.reads, tt.want)
			}
		})
	}
}

func TestOpenShardsRefusesStdinTwiceBeforeOpeningAnything(t *testing.T) {
	_, _, err := OpenShards([]string{"-", "no-such-file", "-"}, strings.NewReader(""))
	if !errors.Is(err, cdc.ErrOption) || err.Error() != `"-" (stdin) can be only one of the shards` {
		t.Fatalf("OpenShards = %v, want the stdin OptionError", err)
	}
}

// countingReader counts its reads and is always at its end.
type countingReader struct{ reads int }

func (r *countingReader) Read([]byte) (int, error) {
	r.reads++
	return 0, io.EOF
}
