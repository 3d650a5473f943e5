package main

import (
	"bufio"
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
)

// The --out file and streams, through the built binary: ingest never cuts
// or writes a file it cannot prove it wrote, locks the file it writes, and
// writes streams (stdout, pipes, devices) at least once.

// outputFixture is a generated stream split into parts, with the clean
// stream of each prefix of the parts.
type outputFixture struct {
	dir   string
	parts []string // input files
	clean [][]byte // clean[i]: the clean stream of parts[0..i]
}

func newOutputFixture(t *testing.T, times uint64, n int) outputFixture {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 91, Times: times})
	fx := outputFixture{dir: dir, parts: splitLines(t, readFile(t, in), n, filepath.Join(dir, "in"))}
	var prefix []byte
	for i, p := range fx.parts {
		prefix = append(prefix, readFile(t, p)...)
		name := filepath.Join(dir, "prefix."+string(rune('1'+i)))
		if err := os.WriteFile(name, prefix, 0o644); err != nil {
			t.Fatal(err)
		}
		fx.clean = append(fx.clean, inMemoryClean(t, name, cdc.JSONL))
	}
	return fx
}

func (fx outputFixture) path(name string) string { return filepath.Join(fx.dir, name) }

func TestIngestRefusesAnOutputFileItCannotProveItWrote(t *testing.T) {
	fx := newOutputFixture(t, 3000, 2)
	other := filepath.Join(t.TempDir(), "other.jsonl")
	writeTestStream(t, other, cdc.JSONL, streamSpec{Seed: 92, Times: 4000})
	// An input with updates only: it releases nothing, so its database
	// commits an empty output file.
	noOutput := fx.path("updates-only.jsonl")
	var upd []byte
	for _, l := range bytes.SplitAfter(readFile(t, fx.parts[0]), []byte("\n")) {
		if bytes.HasPrefix(l, []byte(`{"update"`)) {
			upd = append(upd, l...)
		}
	}
	if err := os.WriteFile(noOutput, upd, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		input   string
		meddle  func(t *testing.T, dir, out string)
		mention string
	}{
		{"another database filled it since", fx.parts[0], func(t *testing.T, dir, out string) {
			os.Remove(out)
			mustRunBin(t, nil, "--quiet", "ingest", "--db", filepath.Join(dir, "b.db"), "--out", out, other)
		}, "are not the ones this database wrote"},
		{"another database filled it since this one left it empty", noOutput, func(t *testing.T, dir, out string) {
			os.Remove(out)
			mustRunBin(t, nil, "--quiet", "ingest", "--db", filepath.Join(dir, "b.db"), "--out", out, other)
		}, "bytes past the 0 committed"},
		{"another file was moved to its path", fx.parts[0], func(t *testing.T, dir, out string) {
			moved := filepath.Join(dir, "moved")
			if err := os.WriteFile(moved, bytes.Repeat([]byte("x"), len(readFile(t, out))+100), 0o644); err != nil {
				t.Fatal(err)
			}
			os.Rename(moved, out)
		}, "are not the ones this database wrote"},
		{"a log was appended to it", fx.parts[0], func(t *testing.T, dir, out string) {
			f, err := os.OpenFile(out, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("12:00:01 service started\n")
			f.Close()
		}, "closed cleanly, so none are its own"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, out := filepath.Join(dir, "a.db"), filepath.Join(dir, "out.jsonl")
			mustRunBin(t, nil, "--quiet", "ingest", "--db", db, "--out", out, tc.input)
			tc.meddle(t, dir, out)
			before := readFile(t, out)
			expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, "--out", out, tc.input, fx.parts[1]},
				tc.mention, "cdclog replay --db "+db+" > "+out)
			if after := readFile(t, out); !bytes.Equal(after, before) {
				t.Fatalf("the refused file changed: %d bytes, had %d", len(after), len(before))
			}
		})
	}
}

func TestIngestToDevStdoutNeverCutsTheFileItLeadsTo(t *testing.T) {
	fx := newOutputFixture(t, 3000, 2)
	db, log := fx.path("state.db"), fx.path("service.log")
	const line = "12:00:00 an unrelated log line\n"
	if err := os.WriteFile(log, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range fx.parts {
		// The shell's `>> service.log`.
		f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd, _, stderr := testbin.Command(t, nil, append([]string{"--quiet", "ingest", "--db", db, "--out", "/dev/stdout"}, fx.parts[:i+1]...)...)
		cmd.Stdout = f
		err = cmd.Run()
		f.Close()
		if err != nil {
			t.Fatalf("run %d: %v: %s", i+1, err, stderr)
		}
	}
	if got, want := readFile(t, log), append([]byte(line), fx.clean[1]...); !bytes.Equal(got, want) {
		t.Fatalf("the log: %s", firstDifference(got, want))
	}
}

func TestTwoIngestsOnOneOutputFile(t *testing.T) {
	fx := newOutputFixture(t, 2000, 1)
	out := fx.path("out.jsonl")
	// The first reads a pipe that stays open, so it keeps the file.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	first, _, firstErr := testbin.Command(t, pr, "--quiet", "ingest", "--db", fx.path("a.db"), "--out", out)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	defer first.Process.Kill()
	pw.Write(readFile(t, fx.parts[0]))
	for deadline := time.Now().Add(10 * time.Second); sizeOrMinusOne(out) <= 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first ingest wrote nothing")
		}
	}
	expectFailure(t, exitFailure, nil, []string{"ingest", "--db", fx.path("b.db"), "--out", out, "--lock-timeout", "300ms", fx.parts[0]},
		"output file is locked by another process")
	pw.Close()
	if err := first.Wait(); err != nil {
		t.Fatalf("the first ingest: %v: %s", err, firstErr)
	}
	if got := readFile(t, out); !bytes.Equal(got, fx.clean[0]) {
		t.Fatalf("the first ingest's file: %s", firstDifference(got, fx.clean[0]))
	}
}

func TestIngestGoesBackToAnEarlierOutputFile(t *testing.T) {
	fx := newOutputFixture(t, 3000, 3)
	db, a, b := fx.path("state.db"), fx.path("a.jsonl"), fx.path("b.jsonl")
	for _, run := range []struct {
		out   string
		parts int
	}{{a, 1}, {b, 2}, {a, 3}} {
		mustRunBin(t, nil, append([]string{"--quiet", "ingest", "--db", db, "--out", run.out}, fx.parts[:run.parts]...)...)
	}
	if got := readFile(t, a); !bytes.Equal(got, fx.clean[2]) {
		t.Fatalf("a, A -> B -> A: %s", firstDifference(got, fx.clean[2]))
	}
	if got := readFile(t, b); !bytes.Equal(got, fx.clean[1]) {
		t.Fatalf("b: %s", firstDifference(got, fx.clean[1]))
	}
}

func TestIngestWritesAStreamAndReportsItsFailureAsSuch(t *testing.T) {
	fx := newOutputFixture(t, 8000, 1)
	t.Run("/dev/null", func(t *testing.T) {
		r := mustRunBin(t, nil, "ingest", "--db", fx.path("null.db"), "--out", "/dev/null", fx.parts[0])
		if strings.Contains(r.Stderr, "storage failure") {
			t.Fatalf("stderr: %s", r.Stderr)
		}
	})
	t.Run("a reader that goes away", func(t *testing.T) {
		db := fx.path("head.db")
		// cdclog ingest ... | head -1
		cmd, _, stderr := testbin.Command(t, nil, "ingest", "--db", db, fx.parts[0])
		cmd.Stdout = nil
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		first, err := bufio.NewReader(stdout).ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		stdout.Close()
		cmd.Wait()
		r := testbin.Finish(cmd, nil, nil, stderr, 0)
		if r.Signaled || r.Code != exitFailure {
			t.Fatalf("%v", r)
		}
		last := lastLine(r.Stderr)
		if !strings.HasPrefix(last, "cdclog: writing the output stream failed: ") || !strings.Contains(last, "broken pipe") ||
			strings.Contains(r.Stderr, "storage failure") {
			t.Fatalf("want a one-line error naming the broken pipe, not a storage failure:\n%s", r.Stderr)
		}
		if !bytes.HasPrefix(fx.clean[0], first) {
			t.Fatalf("first line %q", first)
		}
		// The next run writes the records the broken stream may have
		// missed, then the rest: a suffix of the clean stream.
		r = mustRunBin(t, nil, "--quiet", "ingest", "--db", db, fx.parts[0])
		if len(r.Stdout) == 0 || !bytes.HasSuffix(fx.clean[0], []byte(r.Stdout)) {
			t.Fatalf("the run after: %d bytes, not a suffix of the clean stream", len(r.Stdout))
		}
	})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestIngestWritesStdoutAtLeastOnceAcrossKills kills ingest writing its
// clean stream to stdout (a file, here, which keeps what was written) and
// reruns it: every run's stdout is a stretch of the clean stream (the last
// line may be torn by the kill) that starts at or before where the
// previous one stopped, and together they cover it all.
func TestIngestWritesStdoutAtLeastOnceAcrossKills(t *testing.T) {
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 93))
	times, most := uint64(20000), 5
	if testing.Short() {
		times, most = 10000, 2
	}
	fx := newOutputFixture(t, times, 1)
	want, db := fx.clean[0], fx.path("state.db")
	covered, kills := 0, 0
	for attempt := 0; ; attempt++ {
		if attempt > 30 {
			t.Fatalf("no run completed after %d attempts", attempt)
		}
		outPath := fx.path("stdout." + string(rune('a'+attempt)))
		f, err := os.Create(outPath)
		if err != nil {
			t.Fatal(err)
		}
		target := int64(-1)
		if kills < most {
			target = 1 + rng.Int64N(int64(len(want)-covered)/2+1) // of this run's stdout
		}
		cmd, _, stderr := testbin.Command(t, nil, "--quiet", "ingest", "--db", db, fx.parts[0])
		cmd.Stdout = f
		r, err := testbin.KillWhen(context.Background(), cmd, nil, stderr,
			func(time.Duration) bool { return target >= 0 && sizeOrMinusOne(outPath) >= target })
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := readFile(t, outPath)
		if r.Signaled {
			kills++
			got = got[:bytes.LastIndexByte(got, '\n')+1] // a torn last line
		} else if r.Code != 0 {
			t.Fatalf("%v", r)
		}
		if len(got) > 0 {
			// Records are distinct: the first line says where it starts.
			at := bytes.Index(want, got[:bytes.IndexByte(got, '\n')+1])
			if at < 0 || !bytes.HasPrefix(want[at:], got) || at > covered || (at > 0 && want[at-1] != '\n') {
				t.Fatalf("run %d's stdout (%d bytes) is not a stretch of the clean stream starting by byte %d (found at %d)", attempt+1, len(got), covered, at)
			}
			covered = max(covered, at+len(got))
		}
		if !r.Signaled {
			break
		}
	}
	if covered != len(want) {
		t.Fatalf("after %d kills the runs' stdout covers %d bytes of the clean stream's %d", kills, covered, len(want))
	}
	t.Logf("%d kills", kills)
}

func TestIngestHelpSaysWhatAStreamIs(t *testing.T) {
	r := mustRunBin(t, nil, "ingest", "--help")
	for _, s := range []string{"locked while", "are streams: never cut or\n   checked, written at least once", "cdclog replay --db PATH > FILE"} {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("ingest --help does not say %q", s)
		}
	}
}
