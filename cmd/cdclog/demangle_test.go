package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// cleanFacts reads a clean stream and returns its updates per time and the
// frontier its progress statements reach (cdc.MaxTime once an unbounded
// one says the stream is complete), checking that they tile the time line
// from 0 and count the updates they release.
func cleanFacts(t *testing.T, out string) (updates int, frontier uint64) {
	t.Helper()
	r := cdc.NewReader(strings.NewReader(out), cdc.JSONL, "out")
	held := map[uint64]uint64{}
	for m, err := range r.All() {
		if err != nil {
			t.Fatalf("decode output: %v", err)
		}
		switch m.Kind {
		case cdc.KindUpdate:
			held[m.Update.Time]++
			updates++
		case cdc.KindProgress:
			if m.Progress.Lower != frontier {
				t.Fatalf("progress %v does not start at %d", m, frontier)
			}
			for _, c := range m.Progress.Counts {
				if held[c.Time] != c.Count {
					t.Fatalf("time %d: %d updates, count %d", c.Time, held[c.Time], c.Count)
				}
				delete(held, c.Time)
			}
			if len(held) > 0 {
				t.Fatalf("updates released without a count: %v", held)
			}
			frontier = m.Progress.Upper
			if m.Progress.Unbounded {
				frontier = cdc.MaxTime
			}
		}
	}
	return updates, frontier
}

func TestDemangleRecoversEveryTimeTheSeedDemanglerLoses(t *testing.T) {
	for _, name := range []string{"resilient", "naive"} {
		t.Run(name, func(t *testing.T) {
			var facts struct {
				Times           uint64 `json:"times"`
				DistinctUpdates int    `json:"distinct_updates"`
				SeedLost        int    `json:"seed_demangler_times_lost"`
			}
			meta, _ := os.ReadFile("../../testdata/seed/" + name + ".json")
			if err := json.Unmarshal(meta, &facts); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := runCLI(t, "", "demangle", "../../testdata/seed/"+name+".jsonl")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			updates, frontier := cleanFacts(t, out)
			if frontier != facts.Times || updates != facts.DistinctUpdates {
				t.Fatalf("frontier %d with %d updates, want %d with %d (the seed demangler loses %d times)",
					frontier, updates, facts.Times, facts.DistinctUpdates, facts.SeedLost)
			}
		})
	}
}

func TestDemangleExitCodes(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		args  []string
		code  int
		inErr string
	}{
		{"violation", `{"update":{"data":"a","time":1,"diff":1}}` + "\n" + `{"update":{"data":"a","time":1,"diff":2}}` + "\n",
			nil, exitViolation, "stdin:2"},
		{"malformed", `{"update":{"data":"a","time":1,"diff":1}}` + "\n" + `{"update":{"data":"a","time":-1,"diff":1}}` + "\n",
			nil, exitFailure, "stdin:2"},
		{"finish in a CDC stream", `{"finish":{"time":3}}` + "\n", nil, exitFailure, "convert"},
		{"skip goes on", `{"update":{"data":"a","time":0,"diff":1}}` + "\nnot json\n" + `{"progress":{"time":0,"count":1}}` + "\n",
			[]string{"--on-error", "skip"}, 0, "stdin:2"},
		{"bad flag", "", []string{"--on-error", "ignore"}, exitUsage, "on-error"},
		{"two files", "", []string{"a", "b"}, exitUsage, "at most one"},
		{"missing file", "", []string{"no-such-file.jsonl"}, exitFailure, "no-such-file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.in, append([]string{"demangle"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.inErr) {
				t.Fatalf("exit %d, want %d; stderr %q should name %q", code, tc.code, stderr, tc.inErr)
			}
		})
	}
}

func TestQuarantineFileThatIsTheInputIsRefusedAndTheInputKept(t *testing.T) {
	dir := t.TempDir()
	content := `{"update":{"data":1,"time":0,"diff":1}}` + "\n" + `{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}` + "\n"
	for _, args := range [][]string{
		{"demangle", "--on-error", "quarantine", "--quarantine", "IN", "IN"},
		{"replay", "--on-error", "quarantine", "--quarantine", "IN", "IN"},
	} {
		in := writeFile(t, dir, "in.jsonl", content)
		for i, a := range args {
			if a == "IN" {
				args[i] = in
			}
		}
		code, _, stderr := runCLI(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, "also an input") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 naming the clash", args[0], code, stderr)
		}
		if got, _ := os.ReadFile(in); string(got) != content {
			t.Errorf("%s emptied its input: %q", args[0], got)
		}
	}
}
