package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// summaryLine returns stderr's only line, failing t unless there is exactly
// one, at info level, with message msg.
func summaryLine(t *testing.T, stderr, msg string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], `msg="`+msg+`"`) {
		t.Fatalf("want one info line %q on stderr, got:\n%s", msg, stderr)
	}
	return lines[0]
}

// TestSuccessfulRunsWriteOneSummaryLine runs the README's pipelines through
// the built binary: each successful command writes at most one line, at
// info level, naming the stream complete and counting duplicates and stale
// messages apart, as 'inspect status' does; --quiet writes nothing.
func TestSuccessfulRunsWriteOneSummaryLine(t *testing.T) {
	gen := mustRunBin(t, nil, "gen", "--times", "1000")
	if gen.Stderr != "" {
		t.Fatalf("gen wrote to stderr:\n%s", gen.Stderr)
	}
	mangled := mustRunBin(t, strings.NewReader(gen.Stdout), "mangle")
	if mangled.Stderr != "" {
		t.Fatalf("mangle wrote to stderr:\n%s", mangled.Stderr)
	}
	d := mustRunBin(t, strings.NewReader(mangled.Stdout), "demangle")
	line := summaryLine(t, d.Stderr, "demangle finished")
	for _, key := range []string{"complete", "duplicates", "stale"} {
		if logField(line, "demangle finished", key) == "" {
			t.Errorf("demangle summary has no %s: %s", key, line)
		}
	}
	if logField(line, "demangle finished", "complete") != "true" || strings.Contains(line, "frontier=") || strings.Contains(line, "waiting") {
		t.Errorf("demangle summary of a finished stream: %s", line)
	}

	dir := t.TempDir()
	in := writeFile(t, dir, "in.jsonl", mangled.Stdout)
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	r := mustRunBin(t, nil, "ingest", "--db", db, "--out", out, in)
	line = summaryLine(t, r.Stderr, "ingest finished")
	s := dbStatus(t, db)
	if !s.Complete || logField(line, "ingest finished", "complete") != "true" ||
		logField(line, "ingest finished", "duplicates") != u64(s.Duplicates) || logField(line, "ingest finished", "stale") != u64(s.Stale) {
		t.Errorf("ingest summary %s\ndoes not match the status: complete %v, duplicates %d, stale %d", line, s.Complete, s.Duplicates, s.Stale)
	}

	for _, args := range [][]string{{"demangle"}, {"ingest", "--db", filepath.Join(dir, "q.db")}} {
		if r := mustRunBin(t, strings.NewReader(mangled.Stdout), append([]string{"--quiet"}, args...)...); r.Stderr != "" {
			t.Errorf("--quiet %s wrote to stderr:\n%s", args[0], r.Stderr)
		}
	}
}

// TestSummaryOfAnOpenStreamSaysWhatItWaitsFor: the same words as 'inspect
// status --json' (frontier the number, waiting the kind, reason the
// sentence), at info level: an open stream is no problem.
func TestSummaryOfAnOpenStreamSaysWhatItWaitsFor(t *testing.T) {
	open := mustRunBin(t, nil, "gen", "--times", "50", "--open")
	d := mustRunBin(t, strings.NewReader(open.Stdout), "demangle")
	line := summaryLine(t, d.Stderr, "demangle finished")
	want := map[string]string{"frontier": "50", "complete": "false", "waiting": "progress",
		"reason": "waiting for a progress statement covering time 50"}
	for k, v := range want {
		if got := logField(line, "demangle finished", k); got != v {
			t.Errorf("%s=%q, want %q in %s", k, got, v, line)
		}
	}
}
