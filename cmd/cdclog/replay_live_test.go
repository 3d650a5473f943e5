package main

import (
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReplayRederiveWhileIngestRunsSaysItReadsTheFile: the stored output
// is answered by a running ingest over its control socket, but --rederive
// and --verify read the file itself. Their lock error blamed "a gc, or a
// process without a control socket", though the holder was an ingest with
// one; it now says that these modes read the file, and that plain replay
// asks the running process.
func TestReplayRederiveWhileIngestRunsSaysItReadsTheFile(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "s.db"), filepath.Join(dir, "out.jsonl")
	run := liveIngest(t, "ingest", "--db", db, "--out", out)
	io.WriteString(run.in, cdcTimes(0, 20))
	waitForFile(t, out, cdcTimes(0, 20), 10*time.Second)
	for _, mode := range []string{"--rederive", "--verify"} {
		r := expectFailure(t, exitFailure, nil, []string{"replay", "--db", db, mode, "--lock-timeout", "0"},
			"locked by another process", "replay "+mode+" reads the file itself", "'cdclog replay --db PATH' (the stored output) asks a running ingest or serve")
		if strings.Contains(r.Stderr, "without a control socket") {
			t.Errorf("replay %s: blames a process without a control socket: %s", mode, r.Stderr)
		}
	}
	if r := mustRunBin(t, nil, "replay", "--db", db); r.Stdout != cdcTimes(0, 20) {
		t.Errorf("replay --db while ingest runs: %q", r.Stdout)
	}
	run.proc.Signal(syscall.SIGTERM)
	if r := run.wait(); r.Code != 0 {
		t.Fatalf("ingest: exit %d: %s", r.Code, r.Stderr)
	}
	if r := mustRunBin(t, nil, "replay", "--db", db, "--verify"); !strings.Contains(r.Stdout, "identical") {
		t.Errorf("replay --verify at rest: %q", r.Stdout)
	}
}
