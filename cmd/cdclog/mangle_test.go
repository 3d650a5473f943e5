package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

func TestMangleIsDeterministicBySeed(t *testing.T) {
	in := mustRun(t, "", "gen", "--times", "300")
	a := mustRun(t, in, "mangle", "--seed", "1")
	b := mustRun(t, in, "mangle", "--seed", "1")
	c := mustRun(t, in, "mangle", "--seed", "2")
	if a != b {
		t.Error("seed 1 gives different output on two runs")
	}
	if a == c || a == in {
		t.Error("the output does not depend on the seed, or is not mangled")
	}
}

func TestMangleReadsAFileStdinOrDash(t *testing.T) {
	in := mustRun(t, "", "gen", "--times", "100")
	path := writeFile(t, t.TempDir(), "in.jsonl", in)
	fromFile := mustRun(t, "", "mangle", path)
	if fromStdin := mustRun(t, in, "mangle"); fromStdin != fromFile {
		t.Error("stdin and FILE give different output")
	}
	if fromDash := mustRun(t, in, "mangle", "-"); fromDash != fromFile {
		t.Error(`"-" and FILE give different output`)
	}
}

func TestMangleEmitsEveryMessageOneToMaxCopiesTimes(t *testing.T) {
	in := decodeLines(t, mustRun(t, "", "gen", "--times", "400", "--seed", "4"), cdc.JSONL)
	want := map[string]int{}
	for _, l := range in {
		want[l]++ // Gen never repeats a message
	}
	out := decodeLines(t, mustRun(t, strings.Join(in, "\n"), "mangle", "--max-copies", "4", "--max-delay", "50"), cdc.JSONL)
	got := map[string]int{}
	for _, l := range out {
		if want[l] == 0 {
			t.Fatalf("output message %s is not in the input", l)
		}
		got[l]++
	}
	for l := range want {
		if got[l] < 1 || got[l] > 4 {
			t.Fatalf("%s emitted %d times, want 1 to 4", l, got[l])
		}
	}
	if len(out) == len(in) {
		t.Error("no message was duplicated")
	}
}

func TestMangleWithNoDelayAndOneCopyKeepsTheStream(t *testing.T) {
	in := mustRun(t, "", "gen", "--times", "100")
	if out := mustRun(t, in, "mangle", "--max-delay", "0", "--max-copies", "1"); out != in {
		t.Error("--max-delay 0 --max-copies 1 changed the stream")
	}
}

func TestMangleAcceptsNaiveStreams(t *testing.T) {
	in := mustRun(t, "", "gen", "--kind", "naive", "--times", "50")
	out := mustRun(t, in, "mangle")
	if strings.Count(out, `"finish"`) < strings.Count(in, `"finish"`) {
		t.Error("finish messages were lost")
	}
}

func TestMangleMsgpackInAndOut(t *testing.T) {
	jsonIn := mustRun(t, "", "gen", "--times", "200")
	mpIn := mustRun(t, "", "--out-format", "msgpack", "gen", "--times", "200")
	want := decodeLines(t, mustRun(t, jsonIn, "mangle", "--seed", "8"), cdc.JSONL)
	got := decodeLines(t, mustRun(t, mpIn, "--format", "msgpack", "mangle", "--seed", "8"), cdc.Msgpack)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Error("mangling msgpack gives a different stream from mangling JSON Lines")
	}
}

func TestMangleErrors(t *testing.T) {
	good := `{"update":{"data":"a","time":1,"diff":1}}` + "\n"
	cases := []struct {
		name  string
		in    string
		args  []string
		code  int
		inErr string
	}{
		{"malformed line", good + `{"update":{"data":"a","time":1,"diff":0}}` + "\n", nil, exitFailure, "stdin:2"},
		{"negative delay", "", []string{"--max-delay", "-1"}, exitUsage, "--max-delay"},
		{"no copies", "", []string{"--max-copies", "0"}, exitUsage, "--max-copies"},
		{"bad number", "", []string{"--seed", "x"}, exitUsage, "seed"},
		{"two files", "", []string{"a", "b"}, exitUsage, "at most one"},
		{"missing file", "", []string{filepath.Join(t.TempDir(), "none.jsonl")}, exitFailure, "none.jsonl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.in, append([]string{"mangle"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.inErr) {
				t.Fatalf("exit %d, want %d; stderr %q should name %q", code, tc.code, stderr, tc.inErr)
			}
		})
	}
}

func TestMangleWritesWhatItReadBeforeABadLine(t *testing.T) {
	in := `{"update":{"data":"a","time":1,"diff":1}}` + "\n" + "not json\n"
	code, out, _ := runCLI(t, in, "mangle", "--max-delay", "5")
	if code != exitFailure || !strings.Contains(out, `"data":"a"`) {
		t.Fatalf("exit %d, output %q: want exit 1 with the good message written", code, out)
	}
}
