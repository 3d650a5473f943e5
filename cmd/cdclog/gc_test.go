package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cdclog/cdclog/cdc"
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
	// Everything below the frontier was dropped, and nothing is pending:
	// there is nothing to re-derive, and verify says so.
	if got := replay(t, nil, "--db", db, "--verify"); !strings.Contains(got, "nothing was left to compare") || !strings.Contains(got, "gc dropped") {
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
	recent := inspectDB(t, db, "wal", "--from-time", "70", "--json")
	res := gc(t, db, "--keep-wal", "30")
	if res.Floor != 70 || res.ChunksDeleted == 0 {
		t.Fatalf("gc --keep-wal 30 at frontier 100: %+v", res)
	}
	if got := inspectDB(t, db, "wal", "--from-time", "70", "--json"); got != recent {
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

// TestGCThroughASymlinkCompactsTheTargetAndKeepsTheLink: gc --db LINK
// used to rename the compacted file over the link, leaving the real file
// with its stale data and the two paths locking different files. gc now
// compacts the file the link points to, which keeps its mode and (run as
// root) its owner, and the link stays a link.
func TestGCThroughASymlinkCompactsTheTargetAndKeepsTheLink(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 4, Times: 3000})
	realDir := filepath.Join(dir, "data")
	os.Mkdir(realDir, 0o755)
	target := filepath.Join(realDir, "state.db")
	link := filepath.Join(dir, "state.db")
	if err := os.Symlink("data/state.db", link); err != nil {
		t.Fatal(err)
	}
	mustRunBin(t, nil, "--quiet", "ingest", "--db", link, in) // created at the target
	if err := os.Chmod(target, 0o640); err != nil {
		t.Fatal(err)
	}
	root := os.Geteuid() == 0
	if root {
		if err := os.Chown(target, 1234, 5678); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.Stat(target)
	r := mustRunBin(t, nil, "gc", "--db", link, "--json")
	var res recovery.GCResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is no longer a link: %v %v", fi, err)
	}
	after, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) || res.BytesAfter != after.Size() || res.BytesAfter >= res.BytesBefore {
		t.Fatalf("the target was not compacted: %+v, %d bytes", res, after.Size())
	}
	if after.Mode().Perm() != 0o640 {
		t.Errorf("mode %v after gc, want 0640", after.Mode())
	}
	if st := after.Sys().(*syscall.Stat_t); root && (st.Uid != 1234 || st.Gid != 5678) {
		t.Errorf("owner %d:%d after gc, want 1234:5678", st.Uid, st.Gid)
	}
	if entries, _ := os.ReadDir(realDir); len(entries) != 1 {
		t.Fatalf("files next to the database after gc: %v", entries)
	}
	if a, b := dbStatus(t, link), dbStatus(t, target); a.Frontier != b.Frontier || a.Frontier == 0 {
		t.Fatalf("the link and the target disagree: frontier %d and %d", a.Frontier, b.Frontier)
	}
}

// TestGCRefusesAPathWithNoDatabase: gc on a missing path, or on an empty
// file, fails with "no database at this path" and creates nothing.
func TestGCRefusesAPathWithNoDatabase(t *testing.T) {
	dir := t.TempDir()
	missing, empty := filepath.Join(dir, "missing.db"), filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	expectFailure(t, exitFailure, nil, []string{"gc", "--db", missing}, "no database at this path", missing)
	expectFailure(t, exitFailure, nil, []string{"gc", "--db", empty}, "no database at this path", "no committed cdclog state", empty)
	if _, err := os.Stat(missing); err == nil {
		t.Error("gc created the missing database")
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("gc changed the empty file: %v %v", fi, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
}

// TestAFailedGCRemovesItsTemporaryFile: gc on a full file system fails
// writing the compacted copy; it says so, removes the copy, and leaves
// the database as it was. Needs root (a small tmpfs).
func TestAFailedGCRemovesItsTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 5, Times: 5000})
	src := filepath.Join(dir, "state.db")
	mustRunBin(t, nil, "--quiet", "ingest", "--db", src, in)
	mnt := mountTmpfs(t, "size=16m")
	db := filepath.Join(mnt, "state.db")
	good := readFile(t, src)
	if err := os.WriteFile(db, good, 0o600); err != nil {
		t.Fatal(err)
	}
	// Fill the file system but for 64 KiB.
	var fs syscall.Statfs_t
	if err := syscall.Statfs(mnt, &fs); err != nil {
		t.Fatal(err)
	}
	filler := int64(fs.Bavail)*int64(fs.Bsize) - 64<<10
	if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, filler), 0o600); err != nil {
		t.Fatal(err)
	}
	expectFailure(t, exitFailure, nil, []string{"gc", "--db", db, "--keep-wal", "18446744073709551615"}, "no space left on device")
	if entries, _ := os.ReadDir(mnt); len(entries) != 2 {
		t.Fatalf("files after the failed gc: %v", entries)
	}
	if a, b := dbStatus(t, db), dbStatus(t, src); a.Frontier != b.Frontier || a.WAL.Entries != b.WAL.Entries || a.WAL.Bytes != b.WAL.Bytes || a.OutputRecords != b.OutputRecords {
		t.Fatalf("after the failed gc: %+v\nbefore: %+v", a, b)
	}
}
