package recovery

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/optiontest"
)

func TestOptionsValidateRefusesWhatOpenCannotRun(t *testing.T) {
	var live bytes.Buffer
	tests := []struct {
		name string
		o    Options
		want string // "" when valid
	}{
		{"zero", Options{}, ""},
		{"quarantine", Options{OnError: cdc.Quarantine}, ""},
		{"msgpack stream", Options{Live: &live, LiveFormat: cdc.Msgpack}, ""},
		{"an unknown format without an output", Options{LiveFormat: 7}, ""},
		{"unknown policy", Options{OnError: 3}, "--on-error policy(3) is not fail, skip or quarantine"},
		{"unknown stream format", Options{Live: &live, LiveFormat: 7}, "--out-format format(7) is not jsonl or msgpack"},
		{"negative batch messages", Options{BatchMessages: -1}, "--batch-messages must not be negative (zero means the default)"},
		{"negative batch bytes", Options{BatchBytes: -1}, "BatchBytes must not be negative (zero means the default)"},
		{"negative batch delay", Options{BatchDelay: -time.Millisecond}, "--batch-delay must not be negative (zero means the default)"},
		{"negative pending memory", Options{PendingMemory: -1}, "PendingMemory must not be negative (zero means the default)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !optiontest.Check(t, tt.o.Validate(), tt.want) {
				return
			}
			// Open refuses them the same way, before it creates anything.
			path := filepath.Join(t.TempDir(), "state.db")
			if p, err := Open(path, tt.o); p != nil || err == nil || err.Error() != tt.want {
				t.Fatalf("Open = %v, %v; want %q", p, err, tt.want)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Open created the database: %v", err)
			}
		})
	}
}

func TestCheckOptionsValidateRefusesANegativeLimit(t *testing.T) {
	for _, n := range []int{0, 1, DefaultMaxProblems} {
		if err := (CheckOptions{MaxProblems: n}).Validate(); err != nil {
			t.Errorf("MaxProblems %d: Validate() = %v, want nil", n, err)
		}
	}
	err := CheckOptions{MaxProblems: -1}.Validate()
	if !errors.Is(err, cdc.ErrOption) || err.Error() != "--max-problems must be at least 1" {
		t.Fatalf("Validate() = %v, want the OptionError of --max-problems", err)
	}
	if _, cerr := Check(filepath.Join(t.TempDir(), "none.db"), CheckOptions{MaxProblems: -1}); cerr == nil || cerr.Error() != err.Error() {
		t.Fatalf("Check = %v, want %v before it looks for the file", cerr, err)
	}
}
