package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/recovery"
)

// gc runs 'cdclog gc --db db ARGS --json' and returns its result.
func gc(t *testing.T, db string, args ...string) recovery.GCResult {
	t.Helper()
	code, out, stderr := runCLI(t, "", append([]string{"gc", "--db", db, "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("gc %q: exit %d: %s", args, code, stderr)
	}
	var res recovery.GCResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	return res
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// splitStream cuts a JSON Lines stream at the line boundary after frac of
// its bytes.
func splitStream(s string, frac float64) (string, string) {
	cut := int(float64(len(s)) * frac)
	cut += strings.IndexByte(s[cut:], '\n') + 1
	return s[:cut], s[cut:]
}

func TestGCShrinksALargeCompletedWALAndIngestContinues(t *testing.T) {
	dir := t.TempDir()
	stream := mangledStream(t, 30000, nil)
	first, rest := splitStream(stream, 0.75)
	in1, in2 := writeFile(t, dir, "in1.jsonl", first), writeFile(t, dir, "in2.jsonl", rest)
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	ingest := func(in string) {
		t.Helper()
		if code, _, stderr := runCLI(t, "", "--quiet", "ingest", "--db", db, "--out", out, in); code != 0 {
			t.Fatalf("ingest %s: exit %d: %s", in, code, stderr)
		}
	}
	ingest(in1)
	before := statusJSON(t, db)
	outBefore, _ := os.ReadFile(out)
	// The same database compacted with its whole WAL kept: what gc saves
	// beyond compaction is the WAL.
	kept := filepath.Join(dir, "kept.db")
	copyFile(t, db, kept)
	keptSize := gc(t, kept, "--keep-wal", "18446744073709551615").BytesAfter

	res := gc(t, db)
	if res.Floor != before.Frontier || res.ChunksDeleted == 0 || res.BytesAfter != fileSize(t, db) ||
		res.BytesAfter >= res.BytesBefore || res.BytesAfter > keptSize*2/3 {
		t.Fatalf("gc: %+v (compacted with the WAL kept: %d bytes)", res, keptSize)
	}
	after := statusJSON(t, db)
	if after.Frontier != before.Frontier || after.OutputRecords != before.OutputRecords ||
		after.WAL.Floor != before.Frontier || after.WAL.Entries >= before.WAL.Entries/10 ||
		after.OutputFileBytes != int64(len(outBefore)) {
		t.Fatalf("status before gc %+v\nafter %+v", before, after)
	}
	if got := replay(t, nil, "--db", db); got != string(outBefore) {
		t.Fatal("gc changed the stored output")
	}
	if got := replay(t, nil, "--db", db, "--verify"); !strings.Contains(got, "identical") || !strings.Contains(got, "gc dropped") {
		t.Fatalf("verify after gc: %q", got)
	}

	ingest(in2)
	_, want, _ := runCLI(t, stream, "--quiet", "demangle")
	if got, _ := os.ReadFile(out); string(got) != want {
		t.Fatalf("after gc and more ingest the output file (%d bytes) differs from a plain demangle (%d bytes)", len(got), len(want))
	}
	if got := replay(t, nil, "--db", db); got != want {
		t.Fatal("after gc and more ingest the stored output differs from a plain demangle")
	}
}

// ingestInParts ingests stream into db in n runs over consecutive parts,
// so that the WAL has several chunks, and returns the output file.
func ingestInParts(t *testing.T, db, stream string, n int) string {
	t.Helper()
	dir := filepath.Dir(db)
	out := filepath.Join(dir, "out.jsonl")
	for i := 0; i < n; i++ {
		part := stream
		if i < n-1 {
			part, stream = splitStream(stream, 1/float64(n-i))
		}
		in := writeFile(t, dir, fmt.Sprintf("in%d.jsonl", i), part)
		if code, _, stderr := runCLI(t, "", "--quiet", "ingest", "--db", db, "--out", out, in); code != 0 {
			t.Fatalf("ingest: exit %d: %s", code, stderr)
		}
	}
	return out
}

func TestGCKeepsTheWALOfRecentTimes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	ingestInParts(t, db, mangledStream(t, 100, nil), 5)
	recent := inspect(t, db, "wal", "--from-time", "70", "--json")
	res := gc(t, db, "--keep-wal", "30")
	if res.Floor != 70 || res.ChunksDeleted == 0 {
		t.Fatalf("gc --keep-wal 30 at frontier 100: %+v", res)
	}
	if got := inspect(t, db, "wal", "--from-time", "70", "--json"); got != recent {
		t.Fatal("gc --keep-wal 30 dropped WAL entries at or above time 70")
	}
	if s := statusJSON(t, db); s.WAL.Floor != 70 || s.WAL.MinTime == nil || *s.WAL.MinTime == 0 {
		t.Fatalf("status after gc: %+v", s.WAL)
	}
}

func TestGCKeepsThePendingStateOfAStuckStream(t *testing.T) {
	dir := t.TempDir()
	missing := func(tm, k int) bool { return tm == 150 && k == 1 }
	db := filepath.Join(dir, "state.db")
	stuck := mangledStream(t, 200, func(tm, k int) bool { return !missing(tm, k) })
	out := ingestInParts(t, db, stuck, 5)
	before := statusJSON(t, db)
	if res := gc(t, db); res.Floor != 150 || res.ChunksDeleted == 0 {
		t.Fatalf("gc: %+v", res)
	}
	after := statusJSON(t, db)
	if after.Reason != "time 150 holds 1 of 2 expected updates" || after.Reason != before.Reason ||
		after.PendingTimes != before.PendingTimes || after.PendingUpdates != before.PendingUpdates {
		t.Fatalf("status after gc: %+v\nbefore: %+v", after, before)
	}
	// The withheld update arrives: the stream completes as if gc had not run.
	lateLine := strings.Join(cleanLines(200, missing), "\n") + "\n"
	late := writeFile(t, dir, "late.jsonl", lateLine)
	if code, _, stderr := runCLI(t, "", "--quiet", "ingest", "--db", db, "--out", out, late); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	_, want, _ := runCLI(t, stuck+lateLine, "--quiet", "demangle")
	if got, _ := os.ReadFile(out); string(got) != want || !strings.Contains(want, `"upper":200`) {
		t.Fatal("output after gc and the late update differs from a plain demangle")
	}
}

func TestGCText(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 50, nil))
	code, out, stderr := runCLI(t, "", "gc", "--db", db, "--no-compact")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantLine(t, out, "database", db)
	wantLine(t, out, "wal floor", "50 (the WAL below this time is dropped, whole chunks at a time)")
	wantLine(t, out, "chunks deleted", "1")
	if !strings.Contains(out, "not compacted") {
		t.Fatalf("gc --no-compact:\n%s", out)
	}
}

func TestGCUsageErrors(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 5, nil))
	for _, args := range [][]string{{"gc"}, {"gc", "--db", db, "extra"}, {"gc", "--db", db, "--keep-wal", "-1"}} {
		if code, _, stderr := runCLI(t, "", args...); code != exitUsage {
			t.Fatalf("%q: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
}
