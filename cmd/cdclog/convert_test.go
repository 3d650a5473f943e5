package main

import (
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

func TestConvertedNaiveStreamIsCompleteForDemangle(t *testing.T) {
	for _, shape := range []string{"mixed", "simple"} {
		naive := mustRun(t, "", "gen", "--kind", "naive", "--times", "300", "--shape", shape)
		converted := mustRun(t, naive, "convert")
		mangled := mustRun(t, converted, "mangle")
		updates, frontier := cleanFacts(t, mustRun(t, mangled, "demangle"))
		if want := strings.Count(converted, `"update"`); frontier != cdc.MaxTime || updates != want {
			t.Fatalf("%s: frontier %d with %d updates, want the stream complete with %d", shape, frontier, updates, want)
		}
		open := mustRun(t, mustRun(t, "", "gen", "--kind", "naive", "--times", "300", "--shape", shape, "--open"), "convert")
		if _, frontier := cleanFacts(t, mustRun(t, open, "demangle")); frontier != 300 {
			t.Fatalf("%s --open: frontier %d, want 300", shape, frontier)
		}
	}
}

func TestConvertConsolidatesDropsZerosAndCoversSkippedTimes(t *testing.T) {
	in := strings.Join([]string{
		`{"update":{"data":"b","time":0,"diff":1}}`,
		`{"update":{"data":"a","time":0,"diff":2}}`,
		`{"update":{"data":"b","time":0,"diff":1}}`,
		`{"update":{"data":{"y":1,"x":2},"time":1,"diff":1}}`,
		`{"update":{"data":"c","time":1,"diff":1}}`,
		`{"update":{"data":"c","time":1,"diff":-1}}`,
		`{"update":{"data":"d","time":4,"diff":1}}`,
		`{"finish":{"time":0}}`,
		`{"finish":{"time":3}}`,
		`{"finish":{"time":4}}`,
	}, "\n")
	want := strings.Join([]string{
		`{"update":{"data":"a","time":0,"diff":2}}`,
		`{"update":{"data":"b","time":0,"diff":2}}`,
		`{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":2}]}}`,
		`{"update":{"data":{"x":2,"y":1},"time":1,"diff":1}}`,
		`{"progress":{"lower":1,"upper":4,"counts":[{"time":1,"count":1}]}}`,
		`{"update":{"data":"d","time":4,"diff":1}}`,
		`{"progress":{"lower":4,"upper":5,"counts":[{"time":4,"count":1}]}}`,
	}, "\n") + "\n"
	if got := mustRun(t, in, "convert"); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestConvertErrors(t *testing.T) {
	up := func(tm string) string { return `{"update":{"data":"a","time":` + tm + `,"diff":1}}` + "\n" }
	fin := func(tm string) string { return `{"finish":{"time":` + tm + `}}` + "\n" }
	cases := []struct {
		name    string
		in      string
		args    []string
		code    int
		inErrs  []string
		written string // a prefix of stdout
	}{
		{"progress in the input", up("0") + `{"progress":{"time":0,"count":1}}` + "\n", nil, exitFailure,
			[]string{"stdin:2", "naive"}, ""},
		{"update at a finished time", up("0") + fin("2") + up("1"), nil, exitFailure,
			[]string{"stdin:3", "stdin:2", "finish(t=2)"}, up("0")},
		{"finish twice", fin("2") + fin("2"), nil, exitFailure, []string{"stdin:2", "already finished"}, ""},
		{"malformed", fin("0") + "{}\n", nil, exitFailure, []string{"stdin:2"}, `{"progress"`},
		{"two files", "", []string{"a", "b"}, exitUsage, []string{"at most one"}, ""},
		{"missing file", "", []string{"no-such.jsonl"}, exitFailure, []string{"no-such.jsonl"}, ""},
		{"a flag it does not have", "", []string{"--seed", "1"}, exitUsage, []string{"convert"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, tc.in, append([]string{"convert"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			for _, want := range tc.inErrs {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q should name %q", stderr, want)
				}
			}
			if !strings.HasPrefix(out, tc.written) {
				t.Errorf("stdout %q should start with %q", out, tc.written)
			}
		})
	}
}

func TestConvertWarnsAboutUnfinishedUpdates(t *testing.T) {
	in := `{"update":{"data":"a","time":0,"diff":1}}` + "\n" + `{"finish":{"time":0}}` + "\n" +
		`{"update":{"data":"b","time":1,"diff":1}}` + "\n"
	code, out, stderr := runCLI(t, in, "convert")
	if code != exitOK || !strings.HasSuffix(out, `{"update":{"data":"b","time":1,"diff":1}}`+"\n") {
		t.Fatalf("exit %d, output %q", code, out)
	}
	if !strings.Contains(stderr, "without progress") || !strings.Contains(stderr, "updates=1") {
		t.Fatalf("no warning about the unfinished update: %q", stderr)
	}
	if _, _, stderr := runCLI(t, in, "--quiet", "convert"); !strings.Contains(stderr, "without progress") {
		t.Fatalf("--quiet hides the warning: %q", stderr)
	}
}

func TestConvertMsgpackInput(t *testing.T) {
	naive := mustRun(t, "", "gen", "--kind", "naive", "--times", "100")
	mp := mustRun(t, "", "--out-format", "msgpack", "gen", "--kind", "naive", "--times", "100")
	want := mustRun(t, naive, "convert")
	if got := mustRun(t, mp, "--in-format", "msgpack", "convert"); got != want {
		t.Error("converting msgpack input gives a different stream")
	}
	back := mustRun(t, mp, "--format", "msgpack", "convert")
	if strings.Join(decodeLines(t, back, cdc.Msgpack), "\n")+"\n" != want {
		t.Error("msgpack output differs from JSON Lines output")
	}
}

// Issue 12.15: what counts is the sum of the diffs, whatever their order;
// only a sum beyond 64 bits stops convert, at the finish that would write
// it, naming the line.
func TestConvertSumsDiffsInAnyOrder(t *testing.T) {
	up := func(d string) string { return `{"update":{"data":"a","time":0,"diff":` + d + `}}` + "\n" }
	fin := `{"finish":{"time":0}}` + "\n"
	const max = "9223372036854775807"
	want := `{"update":{"data":"a","time":0,"diff":` + max + `}}` + "\n" +
		`{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}` + "\n"
	for _, in := range []string{up(max) + up("1") + up("-1") + fin, up("-1") + up(max) + up("1") + fin} {
		if got := mustRun(t, in, "convert"); got != want {
			t.Errorf("convert of\n%s gives\n%s", in, got)
		}
	}
	code, _, stderr := runCLI(t, up(max)+up("1")+fin, "convert")
	if code != exitFailure || !strings.Contains(stderr, "stdin:3") || !strings.Contains(stderr, "9223372036854775808") {
		t.Errorf("exit %d, stderr %q; want 1 naming stdin:3 and the sum", code, stderr)
	}
}
