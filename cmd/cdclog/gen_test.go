package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// decodeLines decodes a stream in format f and returns each message as a
// JSON line, so that streams in either format can be compared.
func decodeLines(t *testing.T, stream string, f cdc.Format) []string {
	t.Helper()
	r := cdc.NewReader(strings.NewReader(stream), f, "out")
	var lines []string
	for m, err := range r.All() {
		if err != nil {
			t.Fatalf("decode output: %v", err)
		}
		lines = append(lines, string(cdc.AppendJSON(nil, &m)))
	}
	return lines
}

// mustRun runs a command line that must succeed and returns its stdout.
func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	code, out, stderr := runCLI(t, stdin, args...)
	if code != exitOK {
		t.Fatalf("cdclog %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out
}

func TestGenSameSeedGivesSameBytesAndOtherSeedsDiffer(t *testing.T) {
	for _, kind := range []string{"cdc", "naive"} {
		a := mustRun(t, "", "gen", "--kind", kind, "--seed", "5", "--times", "200")
		b := mustRun(t, "", "gen", "--kind", kind, "--seed", "5", "--times", "200")
		c := mustRun(t, "", "gen", "--kind", kind, "--seed", "6", "--times", "200")
		if a != b || a == "" {
			t.Errorf("%s: seed 5 gives different output on two runs", kind)
		}
		if a == c {
			t.Errorf("%s: seeds 5 and 6 give the same output", kind)
		}
	}
}

func TestGenWritesTheSameStreamInMsgpack(t *testing.T) {
	want := decodeLines(t, mustRun(t, "", "gen", "--times", "300"), cdc.JSONL)
	for _, global := range []string{"--out-format", "--format"} {
		mp := mustRun(t, "", global, "msgpack", "gen", "--times", "300")
		if got := decodeLines(t, mp, cdc.Msgpack); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s msgpack: %d messages differ from the JSON Lines stream's %d", global, len(got), len(want))
		}
	}
}

func TestGenFlagsShapeTheStream(t *testing.T) {
	out := mustRun(t, "", "gen", "--times", "10", "--start", "50", "--keys", "2", "--shape", "simple", "--seed", "3")
	r := cdc.NewReader(strings.NewReader(out), cdc.JSONL, "out")
	data := map[string]bool{}
	var statements int
	for m, err := range r.All() {
		if err != nil {
			t.Fatalf("decode output: %v", err)
		}
		switch m.Kind {
		case cdc.KindUpdate:
			data[string(m.Update.Data)] = true
			if m.Update.Time < 50 || m.Update.Time >= 60 {
				t.Fatalf("%s outside times [50, 60)", m)
			}
		case cdc.KindProgress:
			final := statements == 10 && m.Progress.Lower == 60 && m.Progress.Unbounded && len(m.Progress.Counts) == 0
			if !final && (m.Progress.Lower != 50+uint64(statements) || m.Progress.Upper != m.Progress.Lower+1) {
				t.Fatalf("statement %d is %s", statements, m)
			}
			statements++
		}
	}
	if statements != 11 || len(data) > 2 {
		t.Fatalf("%d statements over %d data values, want 10 and the final one over at most 2", statements, len(data))
	}
	naive := mustRun(t, "", "gen", "--kind", "naive", "--times", "10")
	if strings.Contains(naive, `"progress"`) || strings.Count(naive, `"finish"`) < 1 {
		t.Fatalf("naive stream:\n%s", naive)
	}
}

func TestGenUsageErrors(t *testing.T) {
	cases := [][]string{
		{"--kind", "resilient"},
		{"--shape", "round"},
		{"--keys", "-1"},
		{"--keys", "0"},
		{"--times", "many"},
		{"--start", fmt.Sprint(uint64(cdc.MaxTime))},
		{"extra"},
	}
	for _, args := range cases {
		code, _, stderr := runCLI(t, "", append([]string{"gen"}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "gen") {
			t.Errorf("gen %v: exit %d, stderr %q; want exit 2 naming gen", args, code, stderr)
		}
	}
}

func TestStreamCommandsHelpShowsExamples(t *testing.T) {
	for _, cmd := range []string{"gen", "mangle", "convert"} {
		out := mustRun(t, "", cmd, "--help")
		if !strings.Contains(out, "Examples:") || !strings.Contains(out, "cdclog "+cmd) {
			t.Errorf("%s --help has no usage example:\n%s", cmd, out)
		}
	}
}

func TestGenThroughMangleAndDemangleKeepsEveryUpdate(t *testing.T) {
	clean := mustRun(t, "", "gen", "--times", "500", "--seed", "9")
	mangled := mustRun(t, clean, "mangle", "--seed", "9")
	updates, frontier := cleanFacts(t, mustRun(t, mangled, "demangle"))
	if want := strings.Count(clean, `"update"`); frontier != cdc.MaxTime || updates != want {
		t.Fatalf("demangled: frontier %d with %d updates, want the stream complete with %d", frontier, updates, want)
	}
}

func TestGenEndsItsStreamUnlessOpen(t *testing.T) {
	closed := mustRun(t, "", "gen", "--times", "20", "--seed", "4")
	open := mustRun(t, "", "gen", "--times", "20", "--seed", "4", "--open")
	if want := open + `{"progress":{"lower":20,"counts":[]}}` + "\n"; closed != want {
		t.Fatalf("gen does not end with the final statement after the open stream:\n%s", closed[len(open):])
	}
	if _, frontier := cleanFacts(t, mustRun(t, open, "demangle")); frontier != 20 {
		t.Fatalf("open stream: frontier %d, want 20", frontier)
	}
	naive := mustRun(t, "", "gen", "--kind", "naive", "--times", "20")
	if !strings.HasSuffix(naive, `{"finish":{"time":18446744073709551615}}`+"\n") {
		t.Fatalf("naive stream does not end with a finish at the largest time:\n%s", naive)
	}
}
