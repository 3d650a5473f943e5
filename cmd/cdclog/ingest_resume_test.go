package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A malformed line far into a big file stops ingest; fixing that line in
// place (the file's head unchanged, the line's length changed) and
// rerunning must read the corrected line, not resume past it.
func TestIngestRerunAfterAFailReadsTheCorrectedLine(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(mangledStream(t, 3000, nil), "\n"), "\n")
	bad := len(lines) * 3 / 4 // well past the 64 KiB head
	good := lines[bad]
	lines[bad] = `{"update":{"data":"broken`
	dir := t.TempDir()
	in := writeFile(t, dir, "in.jsonl", strings.Join(lines, "\n")+"\n")
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")

	code, _, stderr := runCLI(t, "", "--quiet", "ingest", "--db", db, "--out", out, in)
	if code != exitFailure || !strings.Contains(stderr, "in.jsonl:") {
		t.Fatalf("exit %d, stderr %q: want exit 1 naming the line", code, stderr)
	}
	lines[bad] = good
	fixed := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(in, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "--quiet", "ingest", "--db", db, "--out", out, in); code != 0 {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	_, want, _ := runCLI(t, fixed, "--quiet", "demangle")
	if got, _ := os.ReadFile(out); string(got) != want {
		t.Fatalf("output after the fix differs from demangle of the fixed input (%d vs %d bytes)", len(got), len(want))
	}
}
