package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inspect while ingest runs (issue 13 item 4): every view, text and JSON,
// is answered by the running process over its control socket, and says
// so; once ingest has stopped, the same views read from the file give the
// same answers.

func TestInspectAnswersWhileIngestRunsAsItWouldAtRest(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "s.db"), filepath.Join(dir, "out.jsonl")
	run := liveIngest(t, "ingest", "--on-error", "quarantine", "--db", db, "--out", out)
	// Released times, a pending one, and a line to quarantine.
	in := cdcTimes(0, 40) + `{"update":{"data":"late","time":40,"diff":1}}` + "\n" + "not json\n"
	io.WriteString(run.in, in)
	waitForFile(t, out, cdcTimes(0, 40), 10*time.Second)
	time.Sleep(50 * time.Millisecond) // the quarantine line's commit
	views := [][]string{
		{"status"}, {"status", "--json"}, {"pending"}, {"pending", "--json"},
		{"wal"}, {"wal", "--json", "--from-time", "39"}, {"output", "--from-seq", "70"},
		{"output", "--json", "--limit", "3"}, {"quarantine"}, {"quarantine", "--json"},
	}
	live := make([]string, len(views))
	for i, v := range views {
		r := mustRunBin(t, nil, append([]string{"inspect", "--db", db}, v...)...)
		if !strings.Contains(r.Stderr, "control socket") {
			t.Errorf("inspect %v does not say the running process answered:\n%s", v, r.Stderr)
		}
		live[i] = r.Stdout
	}
	if r := mustRunBin(t, nil, "replay", "--db", db); r.Stdout != cdcTimes(0, 40) {
		t.Errorf("replay --db while ingest runs: %q", r.Stdout)
	}
	run.proc.Signal(syscall.SIGTERM)
	if r := run.wait(); r.Code != 0 {
		t.Fatalf("ingest: exit %d: %s", r.Code, r.Stderr)
	}
	for i, v := range views {
		r := mustRunBin(t, nil, append([]string{"inspect", "--db", db}, v...)...)
		if strings.Contains(r.Stderr, "control socket") {
			t.Errorf("inspect %v at rest mentions the socket", v)
		}
		got, want := live[i], r.Stdout
		if v[0] == "status" {
			got, want = withoutVolatile(t, got, len(v) > 1), withoutVolatile(t, want, len(v) > 1)
		}
		if got != want {
			t.Errorf("inspect %v while running:\n%s\nat rest:\n%s", v, got, want)
		}
	}
}

// withoutVolatile drops from a status what the clean stop itself changes:
// the checkpoint's time and the file's size.
func withoutVolatile(t *testing.T, s string, isJSON bool) string {
	t.Helper()
	if !isJSON {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "last checkpoint:") && !strings.HasPrefix(l, "file size:") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "last_checkpoint")
	delete(m, "file_bytes")
	b, _ := json.Marshal(m)
	return string(b)
}

func TestGCWhileIngestRunsDropsOnlineAndSaysItDidNotCompact(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "s.db"), filepath.Join(dir, "out.jsonl")
	run := liveIngest(t, "ingest", "--db", db, "--out", out)
	io.WriteString(run.in, cdcTimes(0, 300))
	waitForFile(t, out, cdcTimes(0, 300), 10*time.Second)
	r := mustRunBin(t, nil, "gc", "--db", db, "--json")
	if !strings.Contains(r.Stderr, "held by a running cdclog") {
		t.Errorf("gc does not say who dropped:\n%s", r.Stderr)
	}
	var res struct {
		Floor     string `json:"floor"`
		Compacted bool   `json:"compacted"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || res.Floor != "300" || res.Compacted {
		t.Fatalf("gc while running: %s (%v)", r.Stdout, err)
	}
	// The stream goes on after it, exactly once.
	io.WriteString(run.in, cdcTimes(300, 310))
	waitForFile(t, out, cdcTimes(0, 310), 10*time.Second)
	run.in.Close()
	if r := run.wait(); r.Code != 0 {
		t.Fatalf("ingest: exit %d: %s", r.Code, r.Stderr)
	}
	if st := dbStatus(t, db); st.WAL.Floor != 300 {
		t.Fatalf("WAL floor %d after the online gc", st.WAL.Floor)
	}
	// At rest, gc compacts.
	r = mustRunBin(t, nil, "gc", "--db", db, "--json")
	if !strings.Contains(r.Stdout, `"compacted": true`) {
		t.Fatalf("gc at rest: %s", r.Stdout)
	}
}
