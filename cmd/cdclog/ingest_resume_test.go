package main

import (
	"hash/crc32"
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

func TestCRCRangeHashesTheRangeAsOneSlice(t *testing.T) {
	data := make([]byte, 3*tailSize+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	table := crc32.MakeTable(crc32.Castagnoli)
	for _, r := range [][2]int64{{0, 0}, {0, 10}, {5, tailSize}, {0, int64(len(data))}, {tailSize - 1, 2*tailSize + 3}} {
		got, err := crcRange(f, r[0], r[1])
		if want := crc32.Checksum(data[r[0]:r[0]+r[1]], table); err != nil || got != want {
			t.Fatalf("crcRange(%d, %d) = %08x, %v; want %08x", r[0], r[1], got, err, want)
		}
	}
	// Past the end: what the file holds.
	if got, err := crcRange(f, 10, int64(len(data))); err != nil || got != crc32.Checksum(data[10:], table) {
		t.Fatalf("crcRange past the end = %08x, %v", got, err)
	}
}
