package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cdclog/cdclog/internal/sigstop"
	"github.com/cdclog/cdclog/internal/testbin"
)

// A live feed through the built binary (issue 13 items 2 and 3): what a
// pausing producer wrote is committed and released within the batch delay,
// a finished input is not held back, the first SIGINT or SIGTERM commits
// what was read, the second exits at once, and --follow reads a growing,
// rotating file.

// cdcTimes is a complete clean stream of times from..to-1: one update a
// time and a statement counting it; it is its own clean output.
func cdcTimes(from, to int) string {
	var b strings.Builder
	for t := from; t < to; t++ {
		fmt.Fprintf(&b, `{"update":{"data":"k%d","time":%d,"diff":1}}`+"\n", t, t)
		fmt.Fprintf(&b, `{"progress":{"lower":%d,"upper":%d,"counts":[{"time":%d,"count":1}]}}`+"\n", t, t+1, t)
	}
	return b.String()
}

// liveRun is cdclog running with its stdin a pipe that the test writes.
type liveRun struct {
	in   *os.File
	proc *os.Process
	wait func() testbin.Result
}

// liveIngest starts cdclog with args, its stdin a pipe that the test
// writes.
func liveIngest(t *testing.T, args ...string) liveRun {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd, stdout, stderr := testbin.Command(t, nil, args...)
	cmd.Stdin = pr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	t.Cleanup(func() { pw.Close(); cmd.Process.Kill() })
	var res *testbin.Result
	return liveRun{in: pw, proc: cmd.Process, wait: func() testbin.Result {
		if res == nil {
			err := cmd.Wait()
			r := testbin.Finish(cmd, err, stdout, stderr, time.Since(start))
			res = &r
		}
		return *res
	}}
}

// runFor waits until a live ingest has written its first records to out
// (it is running, past its start-up, however slow the machine), then d
// more, while its input stays open.
func runFor(t *testing.T, out string, d time.Duration) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		if fi, err := os.Stat(out); err == nil && fi.Size() > 0 {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s: nothing written after 10s", filepath.Base(out))
		}
	}
	time.Sleep(d)
}

// waitForFile waits until the file at path holds want, for up to d, and
// returns how long that took.
func waitForFile(t *testing.T, path string, want string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got, _ := os.ReadFile(path)
		if string(got) == want {
			return time.Since(start)
		}
		if time.Since(start) > d {
			t.Fatalf("%s after %v: %d bytes, want %d:\n%s", filepath.Base(path), d, len(got), len(want), firstDifference(got, []byte(want)))
		}
		time.Sleep(time.Millisecond)
	}
}

func TestIngestReleasesWhatAPausingProducerWroteWithinTheBatchDelay(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	run := liveIngest(t, "ingest", "--db", filepath.Join(dir, "s.db"), "--out", out)
	pw, wait := run.in, run.wait
	var worst time.Duration
	for round := range 10 {
		io.WriteString(pw, cdcTimes(round, round+1))
		// The producer pauses after each time.
		took := waitForFile(t, out, cdcTimes(0, round+1), 10*time.Second)
		t.Logf("round %d: %v", round, took)
		worst = max(worst, took)
	}
	t.Logf("slowest release after a write: %v (default --batch-delay)", worst)
	pw.Close()
	closed := time.Now()
	if r := wait(); r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	t.Logf("exit %v after the producer closed", time.Since(closed))
}

func TestIngestStreamsToStdoutAsThePipeDelivers(t *testing.T) {
	dir := t.TempDir()
	pr, pw, _ := os.Pipe()
	cmd, _, stderr := testbin.Command(t, nil, "ingest", "--db", filepath.Join(dir, "s.db"))
	outR, outW, _ := os.Pipe()
	cmd.Stdin, cmd.Stdout = pr, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	outW.Close()
	defer cmd.Process.Kill()
	io.WriteString(pw, cdcTimes(0, 3))
	want := cdcTimes(0, 3)
	got := make([]byte, len(want))
	done := make(chan error, 1)
	go func() { _, err := io.ReadFull(outR, got); done <- err }()
	select {
	case err := <-done:
		if err != nil || string(got) != want {
			t.Fatalf("stdout %q, %v", got, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("nothing on stdout while the producer pauses; stderr: %s", stderr)
	}
	pw.Close()
	cmd.Wait()
}

func TestIngestOfAFinishedFileIsNotHeldBackByALongBatchDelay(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(cdcTimes(0, 1)+`{"progress":{"lower":1,"upper":[]}}`+"\n"), 0o644)
	r := mustRunBin(t, nil, "ingest", "--batch-delay", "60s", "--db", filepath.Join(dir, "s.db"), "--out", filepath.Join(dir, "out.jsonl"), in)
	if r.Elapsed > 30*time.Second {
		t.Fatalf("a 3-line file took %v with --batch-delay 60s", r.Elapsed)
	}
}

func TestIngestBatchMessagesMeansWhatItSays(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(cdcTimes(0, 50)), 0o644)
	db := filepath.Join(dir, "s.db")
	mustRunBin(t, nil, "--quiet", "ingest", "--batch-messages", "1", "--db", db, "--out", filepath.Join(dir, "out.jsonl"), in)
	if st := dbStatus(t, db); st.WAL.Chunks != 100 {
		t.Fatalf("%d WAL chunks (commits of messages) for 100 messages at --batch-messages 1", st.WAL.Chunks)
	}
}

// signalStops: what the first signal does, and the exit code it gives.
var signalStops = []struct {
	sig  syscall.Signal
	code int
}{{syscall.SIGTERM, 0}, {syscall.SIGINT, 130}}

func TestTheFirstSignalCommitsWhatWasReadAndTheRerunFinishesTheOutput(t *testing.T) {
	for _, tc := range signalStops {
		t.Run(sigstop.Name(tc.sig), func(t *testing.T) {
			dir := t.TempDir()
			db, out := filepath.Join(dir, "s.db"), filepath.Join(dir, "out.jsonl")
			// An hour's batch delay: what was read is waiting to be
			// committed when the signal comes.
			run := liveIngest(t, "ingest", "--batch-delay", "1h", "--db", db, "--out", out)
			first := cdcTimes(0, 500)
			io.WriteString(run.in, first)
			time.Sleep(300 * time.Millisecond)
			run.proc.Signal(tc.sig)
			r := run.wait()
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.Code, tc.code, r.Stderr)
			}
			if !strings.Contains(r.Stderr, "ingest stopped") || !strings.Contains(r.Stderr, "resume=") {
				t.Errorf("no summary line saying how to resume:\n%s", r.Stderr)
			}
			if got := readFile(t, out); string(got) != first {
				t.Fatalf("after the stop: %s", firstDifference(got, []byte(first)))
			}
			// The producer's input, sent again whole, completes it.
			all := cdcTimes(0, 1000)
			mustRunBin(t, strings.NewReader(all), "--quiet", "ingest", "--db", db, "--out", out)
			if got := readFile(t, out); string(got) != all {
				t.Fatalf("after the rerun: %s", firstDifference(got, []byte(all)))
			}
		})
	}
}

func TestASecondSignalExitsAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	// A reader that never reads: once the pipe is full, ingest cannot
	// finish writing its output, nor stop cleanly.
	rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	run := liveIngest(t, "ingest", "--db", filepath.Join(dir, "s.db"), "--out", fifo)
	go io.WriteString(run.in, cdcTimes(0, 20000))
	time.Sleep(500 * time.Millisecond)
	run.proc.Signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	sent := time.Now()
	run.proc.Signal(syscall.SIGTERM)
	r := run.wait()
	if r.Code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d after the second SIGTERM, want %d: %s", r.Code, 128+int(syscall.SIGTERM), r.Stderr)
	}
	if took := time.Since(sent); took > 10*time.Second {
		t.Fatalf("the second signal took %v to end the process", took)
	}
	if !strings.Contains(r.Stderr, "second signal") {
		t.Errorf("stderr does not say why it exited:\n%s", r.Stderr)
	}
}

func TestIngestFollowReadsAGrowingRotatingFileUntilASignal(t *testing.T) {
	dir := t.TempDir()
	in, db, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "s.db"), filepath.Join(dir, "out.jsonl")
	os.WriteFile(in, []byte(cdcTimes(0, 100)), 0o644)
	cmd, stdout, stderr := testbin.Command(t, nil, "ingest", "--follow", "--db", db, "--out", out, in)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitForFile(t, out, cdcTimes(0, 100), 10*time.Second)
	appendTo(t, in, cdcTimes(100, 150))
	waitForFile(t, out, cdcTimes(0, 150), 10*time.Second)
	// Rotation: the last lines go to the old file, then a new one starts.
	appendTo(t, in, cdcTimes(150, 160))
	os.Rename(in, in+".1")
	os.WriteFile(in, []byte(cdcTimes(160, 200)), 0o644)
	waitForFile(t, out, cdcTimes(0, 200), 10*time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	r := testbin.Finish(cmd, cmd.Wait(), stdout, stderr, time.Since(start))
	if r.Code != 0 || !strings.Contains(r.Stderr, "rotated") {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	// A rerun resumes in the new file.
	appendTo(t, in, cdcTimes(200, 210)+`{"progress":{"lower":210,"upper":[]}}`+"\n")
	r2 := mustRunBin(t, nil, "ingest", "--db", db, "--out", out, in)
	if !strings.Contains(r2.Stderr, "resuming input") {
		t.Errorf("the rerun did not resume:\n%s", r2.Stderr)
	}
	want := cdcTimes(0, 210) + `{"progress":{"lower":210,"counts":[]}}` + "\n"
	if got := readFile(t, out); !bytes.Equal(got, []byte(want)) {
		t.Fatalf("%s", firstDifference(got, []byte(want)))
	}
}

// --follow of a path with no file yet waits for the file, like tail -F,
// and reads it from its start once it appears; a plain missing FILE is
// still an error.
func TestIngestFollowWaitsForAFileThatDoesNotExistYet(t *testing.T) {
	dir := t.TempDir()
	in, db, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "s.db"), filepath.Join(dir, "out.jsonl")
	expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, "--out", out, in}, "no such file")
	cmd, stdout, _ := testbin.Command(t, nil, "ingest", "--follow", "--db", db, "--out", out, in)
	logPath := filepath.Join(dir, "stderr")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stderr = logFile // read while it runs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for log, _ := os.ReadFile(logPath); !strings.Contains(string(log), "waiting for it to appear"); log, _ = os.ReadFile(logPath) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("ingest --follow of a missing file does not say it waits:\n%s", log)
		}
		time.Sleep(time.Millisecond)
	}
	os.WriteFile(in, []byte(cdcTimes(0, 20)), 0o644)
	waitForFile(t, out, cdcTimes(0, 20), 10*time.Second)
	appendTo(t, in, cdcTimes(20, 30))
	waitForFile(t, out, cdcTimes(0, 30), 10*time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	r := testbin.Finish(cmd, cmd.Wait(), stdout, &bytes.Buffer{}, time.Since(start))
	log, _ := os.ReadFile(logPath)
	if r.Code != 0 || strings.Count(string(log), "waiting for it to appear") != 1 {
		t.Fatalf("exit %d, want 0 having logged the wait once:\n%s", r.Code, log)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	io.WriteString(f, s)
}

func TestIngestLogsProgressWhenStderrIsNotATerminal(t *testing.T) {
	dir := t.TempDir()
	run := liveIngest(t, "ingest", "--progress-interval", "20ms", "--db", filepath.Join(dir, "s.db"), "--out", filepath.Join(dir, "out.jsonl"))
	io.WriteString(run.in, cdcTimes(0, 10))
	runFor(t, filepath.Join(dir, "out.jsonl"), 200*time.Millisecond)
	run.in.Close()
	r := run.wait()
	if !strings.Contains(r.Stderr, "ingest progress") || !strings.Contains(r.Stderr, "messages=20") {
		t.Fatalf("no progress line:\n%s", r.Stderr)
	}
	// --quiet silences it.
	run = liveIngest(t, "--quiet", "ingest", "--progress-interval", "20ms", "--db", filepath.Join(dir, "q.db"), "--out", filepath.Join(dir, "q.jsonl"))
	io.WriteString(run.in, cdcTimes(0, 10))
	runFor(t, filepath.Join(dir, "q.jsonl"), 200*time.Millisecond)
	run.in.Close()
	if r := run.wait(); strings.Contains(r.Stderr, "progress") {
		t.Fatalf("--quiet still logs progress:\n%s", r.Stderr)
	}
}

func TestIngestFollowStopsWhenAnotherProgramWritesItsOutputFile(t *testing.T) {
	dir := t.TempDir()
	in, db, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "s.db"), filepath.Join(dir, "out.jsonl")
	os.WriteFile(in, []byte(cdcTimes(0, 100)), 0o644)
	cmd, stdout, stderr := testbin.Command(t, nil, "ingest", "--follow", "--db", db, "--out", out, in)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitForFile(t, out, cdcTimes(0, 100), 10*time.Second)
	theirs := cdcTimes(0, 100) + "a line of another program's\n"
	appendTo(t, out, "a line of another program's\n")
	appendTo(t, in, cdcTimes(100, 150))
	// It stops by itself, without a signal, and says why: it does not
	// overwrite the line, nor wait for more input.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var r testbin.Result
	select {
	case err := <-exited:
		r = testbin.Finish(cmd, err, stdout, stderr, time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("ingest --follow goes on after another program wrote to its --out")
	}
	if r.Code != exitFailure || !strings.Contains(r.Stderr, "another program wrote to it") || !strings.Contains(r.Stderr, "replay --db") {
		t.Fatalf("exit %d, want %d saying another program wrote to the output and how to regenerate it:\n%s", r.Code, exitFailure, r.Stderr)
	}
	if got := readFile(t, out); string(got) != theirs {
		t.Fatalf("the output file was written after another program's line:\n%s", firstDifference(got, []byte(theirs)))
	}
	expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, "--out", out, in}, "did not write")
}
