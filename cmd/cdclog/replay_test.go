package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// replay runs 'cdclog [global] replay ARGS' and fails unless it exits 0.
func replay(t *testing.T, global []string, args ...string) string {
	t.Helper()
	code, out, stderr := runCLI(t, "", append(append(append([]string{}, global...), "replay"), args...)...)
	if code != 0 {
		t.Fatalf("replay %q: exit %d: %s", args, code, stderr)
	}
	return out
}

func TestReplayIsByteIdenticalToIngestOut(t *testing.T) {
	for _, format := range []string{"jsonl", "msgpack"} {
		t.Run(format, func(t *testing.T) {
			global := []string{"--out-format", format}
			dir := t.TempDir()
			in := writeFile(t, dir, "in.jsonl", mangledStream(t, 300, func(tm, k int) bool { return tm != 250 }))
			db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out")
			args := append(global, "--quiet", "ingest", "--db", db, "--out", out, "--batch-messages", "64", in)
			if code, _, stderr := runCLI(t, "", args...); code != 0 {
				t.Fatalf("ingest: exit %d: %s", code, stderr)
			}
			file, _ := os.ReadFile(out)
			if got := replay(t, global, "--db", db); got != string(file) || len(file) == 0 {
				t.Fatalf("replay (%d bytes) differs from the ingest --out file (%d bytes)", len(got), len(file))
			}
		})
	}
}

func TestReplayFromSeqResumesAtARecord(t *testing.T) {
	db, out := ingestDB(t, mangledStream(t, 100, nil))
	file, _ := os.ReadFile(out)
	lines := strings.SplitAfter(string(file), "\n")
	lines = lines[:len(lines)-1] // after the last "\n"
	for _, from := range []int{1, 2, 17, len(lines), len(lines) + 1} {
		want := strings.Join(lines[from-1:], "")
		if got := replay(t, nil, "--db", db, "--from-seq", u64(uint64(from))); got != want {
			t.Fatalf("--from-seq %d: got %d bytes, want %d", from, len(got), len(want))
		}
	}
	// Past the end: nothing, and a warning.
	code, got, stderr := runCLI(t, "", "replay", "--db", db, "--from-seq", u64(uint64(len(lines)+5)))
	if code != 0 || got != "" || !strings.Contains(stderr, "nothing to replay") {
		t.Fatalf("past the end: exit %d, %q, %s", code, got, stderr)
	}
}

func TestReplayRederiveEqualsTheStoredOutput(t *testing.T) {
	dir := t.TempDir()
	stream := mangledStream(t, 400, nil)
	half := strings.Index(stream[len(stream)/2:], "\n") + len(stream)/2 + 1
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	// Two runs, small batches: many group commits, and a reopened database.
	for i, part := range []string{stream[:half], stream[half:]} {
		in := writeFile(t, dir, "in"+u64(uint64(i))+".jsonl", part)
		if code, _, stderr := runCLI(t, "", "--quiet", "ingest", "--db", db, "--out", out, "--batch-messages", "50", in); code != 0 {
			t.Fatalf("ingest: exit %d: %s", code, stderr)
		}
	}
	file, _ := os.ReadFile(out)
	if got := replay(t, nil, "--db", db, "--rederive"); got != string(file) {
		t.Fatalf("re-derived %d bytes, the stored output has %d", len(got), len(file))
	}
	if got := replay(t, nil, "--db", db, "--verify"); got != "verified "+u64(uint64(strings.Count(string(file), "\n")))+" records: identical\n" {
		t.Fatalf("verify: %q", got)
	}
}

func TestReplayVerifyCatchesADifference(t *testing.T) {
	db, out := ingestDB(t, mangledStream(t, 50, nil))
	seq := tamperFirstUpdate(t, db)
	code, stdout, stderr := runCLI(t, "", "replay", "--db", db, "--verify")
	want := "first difference at record " + u64(seq) + ":"
	if code != exitFailure || !strings.Contains(stdout, want) || !strings.Contains(stdout, "stored:") ||
		!strings.Contains(stdout, "re-derived:") || !strings.Contains(stderr, "differs") {
		t.Fatalf("verify on a tampered output: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// The stored output now differs from the file; the re-derived stream
	// does not.
	file, _ := os.ReadFile(out)
	if replay(t, nil, "--db", db) == string(file) || replay(t, nil, "--db", db, "--rederive") != string(file) {
		t.Fatal("tampering did not change the stored output only")
	}
}

// tamperFirstUpdate negates the diff of the first update in the output log
// (laid out as recovery/outputlog.go says: per chunk, a checksum, a
// uvarint count, then per record a uvarint length and the record in cdc's
// binary form), seals the chunk again with a checksum that matches (an
// edit, not damage), and returns the record's sequence number.
func tamperFirstUpdate(t *testing.T, path string) uint64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var seq uint64
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(store.BucketOutput)
		k, v := b.Cursor().First()
		v = v[checksum.Size:]
		n, w := binary.Uvarint(v)
		v = v[w:]
		chunk := binary.AppendUvarint(nil, n)
		for i := uint64(0); i < n; i++ {
			size, w := binary.Uvarint(v)
			var m cdc.Message
			if _, err := cdc.ParseBinary(v[w:w+int(size)], &m); err != nil {
				return err
			}
			v = v[w+int(size):]
			if seq == 0 && m.Kind == cdc.KindUpdate {
				m.Update.Diff = -m.Update.Diff
				seq = binary.BigEndian.Uint64(k) + i
			}
			rec := cdc.AppendBinary(nil, &m)
			chunk = append(binary.AppendUvarint(chunk, uint64(len(rec))), rec...)
		}
		return b.Put(append([]byte(nil), k...), checksum.Seal(k, chunk))
	})
	if err != nil || seq == 0 {
		t.Fatalf("tamper: seq %d, %v", seq, err)
	}
	return seq
}

func TestReplayFileIsDemangle(t *testing.T) {
	dir := t.TempDir()
	bad := `{"update":{"data":"x","time":1,"diff":0}}` + "\n"
	in := writeFile(t, dir, "in.jsonl", bad+mangledStream(t, 60, func(tm, k int) bool { return tm != 40 }))
	for _, flags := range [][]string{{"--on-error", "skip"}, {"--on-error", "skip", "--start", "10"}} {
		args := append(append([]string{}, flags...), in)
		code1, want, err1 := runCLI(t, "", append([]string{"demangle"}, args...)...)
		code2, got, err2 := runCLI(t, "", append([]string{"replay"}, args...)...)
		if code1 != 0 || code2 != 0 || got != want || want == "" {
			t.Fatalf("%q: demangle exit %d (%s), replay exit %d (%s), same output: %v", flags, code1, err1, code2, err2, got == want)
		}
	}
	// Without skip the bad line fails both, the same way.
	code, _, stderr := runCLI(t, "", "replay", in)
	if code != exitFailure || !strings.Contains(stderr, "in.jsonl:1") {
		t.Fatalf("replay FILE with a bad line: exit %d: %s", code, stderr)
	}
}

func TestReplayUsageErrors(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 5, nil))
	for _, args := range [][]string{
		{"replay"},
		{"replay", "--db", db, "in.jsonl"},
		{"replay", "--db", db, "--verify", "--from-seq", "3"},
		{"replay", "--db", db, "--rederive", "--from-seq", "3"},
		{"replay", "--db", db, "--start", "3"},
		{"replay", "--db", db, "--on-error", "skip"},
		{"replay", "--db", db, "--max-memory", "1GiB"},
		{"replay", "--db", db, "--rederive", "--max-memory", "1GiB"},
		{"replay", "--db", db, "--rederive", "--verify"},
		{"replay", "--rederive", "in.jsonl"},
		{"replay", "--from-seq", "2", "in.jsonl"},
		{"replay", "a.jsonl", "b.jsonl"},
		{"replay", "--db", ""},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != exitUsage {
			t.Fatalf("%q: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
}

// TestReplayVerifyOfADatabaseWrittenBeforeArrivalOrderedChunks: the golden
// database (schema 1) was written when a batch was sorted by time before
// it was cut into WAL chunks. --rederive fed its messages in that time
// order, so --verify reported "the stored output differs" on an intact
// database; read back in arrival order, the re-derived stream is the
// stored one.
func TestReplayVerifyOfADatabaseWrittenBeforeArrivalOrderedChunks(t *testing.T) {
	db := filepath.Join(goldenDir, "stuck.db")
	if out := replay(t, nil, "--db", db, "--verify"); out != "verified 38 records: identical\n" {
		t.Fatalf("replay --verify: %q", out)
	}
	if stored, derived := replay(t, nil, "--db", db), replay(t, nil, "--db", db, "--rederive"); derived != stored {
		t.Fatalf("replay --rederive:\n%s\nstored:\n%s", derived, stored)
	}
}

// TestReplayFileSummaryNamesReplay: 'replay FILE' runs demangle's code,
// and its summary line said "demangle finished"; it names the command
// that was run, with the same fields.
func TestReplayFileSummaryNamesReplay(t *testing.T) {
	in := writeFile(t, t.TempDir(), "in.jsonl", mangledStream(t, 20, nil))
	r := mustRunBin(t, nil, "replay", in)
	line := summaryLine(t, r.Stderr, "replay finished")
	if logField(line, "replay finished", "records_out") == "" || strings.Contains(r.Stderr, "demangle finished") {
		t.Fatalf("replay FILE summary:\n%s", r.Stderr)
	}
	d := mustRunBin(t, nil, "demangle", in)
	if summaryLine(t, d.Stderr, "demangle finished") == "" || d.Stdout != r.Stdout {
		t.Fatalf("demangle FILE: %v", d)
	}
}
