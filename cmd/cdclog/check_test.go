package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// schema1Dir holds a database written before checksums (see its README).
const schema1Dir = "../../testdata/schema1"

// checkJSON runs 'cdclog check --db db --json' through the binary and
// returns its exit code and report.
func checkJSON(t *testing.T, db string) (int, recovery.CheckReport) {
	t.Helper()
	r := testbin.Run(t, nil, "check", "--db", db, "--json")
	noPanic(t, r)
	var rep recovery.CheckReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("check --json: %v\n%s", err, r)
	}
	return r.Code, rep
}

// TestCheckPassesAHealthyDatabase: on a database with every kind of record
// (WAL, output, checkpoint, quarantine) and after gc, check exits 0, says
// so, and runs every check.
func TestCheckPassesAHealthyDatabase(t *testing.T) {
	db, _ := ingestDB(t, "not json\n"+mangledStream(t, 300, func(tm, k int) bool { return !(tm == 250 && k == 1) }), "--on-error", "quarantine")
	for _, gcArgs := range [][]string{nil, {"--keep-wal", "100"}} {
		if gcArgs != nil {
			mustRunBin(t, nil, append([]string{"gc", "--db", db}, gcArgs...)...)
		}
		r := mustRunBin(t, nil, "check", "--db", db)
		for _, want := range []string{"result:         ok: every check holds", "checks run:     bbolt, records, cross-checks, replay", "quarantine 1"} {
			if !strings.Contains(r.Stdout, want) {
				t.Fatalf("check does not say %q:\n%s", want, r.Stdout)
			}
		}
		code, rep := checkJSON(t, db)
		if code != 0 || !rep.OK || len(rep.Problems) != 0 || rep.SchemaVersion != store.SchemaVersion || rep.OutputRecords == 0 {
			t.Fatalf("check --json: exit %d, %+v", code, rep)
		}
	}
}

// TestCheckAndIngestOnASchema1Database: the database written before
// checksums passes check as it is (its records counted as unverified);
// ingest upgrades it and continues to the exact clean stream; check then
// passes at schema 2, and replay --verify finds the output identical.
func TestCheckAndIngestOnASchema1Database(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	copyFile(t, filepath.Join(schema1Dir, "state.db"), db)
	r := mustRunBin(t, nil, "check", "--db", db)
	if !strings.Contains(r.Stdout, "schema version: 1 (written before checksums") || !strings.Contains(r.Stdout, "output 3 (3 unverified)") {
		t.Fatalf("check of the schema 1 database:\n%s", r.Stdout)
	}
	out := filepath.Join(dir, "out.jsonl")
	mustRunBin(t, nil, "ingest", "--db", db, "--out", out, filepath.Join(schema1Dir, "more.jsonl"))
	if got, want := readFile(t, out), readFile(t, filepath.Join(schema1Dir, "clean.jsonl")); !bytes.Equal(got, want) {
		t.Fatalf("after ingest into the schema 1 database: %s", firstDifference(got, want))
	}
	code, rep := checkJSON(t, db)
	if code != 0 || !rep.OK || rep.SchemaVersion != store.SchemaVersion {
		t.Fatalf("check after the upgrade: exit %d, %+v", code, rep)
	}
	if r := mustRunBin(t, nil, "replay", "--db", db, "--verify"); !strings.Contains(r.Stdout, "verified 1152 records: identical") {
		t.Fatalf("replay --verify: %s", r.Stdout)
	}
}

// storedRecord is where a record's value lies in a database file.
type storedRecord struct {
	bucket, key string // the key as store.FormatKey renders it
	at, size    int
}

// findRecords finds in a compacted database file (no stale copies in free
// pages) the values of the first and last records of each bucket named.
func findRecords(t *testing.T, path string, buckets ...string) []storedRecord {
	t.Helper()
	file := readFile(t, path)
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var recs []storedRecord
	db.View(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			c := tx.Bucket([]byte(name)).Cursor()
			k1, _ := c.First()
			k2, _ := c.Last()
			for i, k := range [][]byte{k1, k2} {
				if k == nil || i == 1 && bytes.Equal(k, k1) {
					continue
				}
				kv := append(append([]byte(nil), k...), tx.Bucket([]byte(name)).Get(k)...)
				if n := bytes.Count(file, kv); n != 1 {
					t.Fatalf("%s %x is stored %d times", name, k, n)
				}
				recs = append(recs, storedRecord{name, store.FormatKey(k), bytes.Index(file, kv) + len(k), len(kv) - len(k)})
			}
		}
		return nil
	})
	return recs
}

// TestEveryCommandFailsOrAnswersRightOnAFlippedBit (issue 12, item 3): a
// bit flipped in the file where a record is stored (the checkpoint, the
// first and last WAL chunks and index records, output chunks, a quarantine
// record) makes every command either exit 1 with an error naming the
// record's bucket and key, or print what it prints on the undamaged
// database (a command that never reads the record): never another answer
// with exit 0. 'cdclog check', through the built binary, always exits 1
// and names the record.
func TestEveryCommandFailsOrAnswersRightOnAFlippedBit(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	withheld := func(tm, k int) bool { return !(tm == 250 && k == 1) }
	in := writeFile(t, dir, "in.jsonl", "not json\n"+mangledStream(t, 300, withheld))
	more := writeFile(t, dir, "more.jsonl", strings.Join(cleanLines(300, func(tm, k int) bool { return !withheld(tm, k) }), "\n")+"\n")
	db, dbOut := filepath.Join(dir, "db"), filepath.Join(dir, "db.out")
	out := dbOut // the database names its output file by path
	for i, part := range splitLines(t, readFile(t, in), 3, filepath.Join(dir, "part")) {
		if code, _, stderr := runCLI(t, "", "--quiet", "ingest", "--db", good, "--out", out, "--on-error", "quarantine", "--batch-messages", strconv.Itoa(50+i), part); code != 0 {
			t.Fatalf("ingest: %s", stderr)
		}
	}
	mustRunBin(t, nil, "gc", "--db", good, "--keep-wal", strconv.FormatUint(math.MaxUint64, 10)) // compact only
	goodBytes, goodOut := readFile(t, good), readFile(t, out)
	commands := [][]string{
		{"--quiet", "ingest", "--db", db, "--out", dbOut, more},
		{"inspect", "--db", db, "status", "--json"},
		{"inspect", "--db", db, "wal", "--json"},
		{"inspect", "--db", db, "output", "--json"},
		{"inspect", "--db", db, "quarantine", "--json"},
		{"replay", "--db", db},
		{"replay", "--db", db, "--verify"},
		{"replay", "--db", db, "--rederive"},
		{"gc", "--db", db, "--json", "--no-compact"},
	}
	// run runs a command on a fresh copy of the database file b; its answer
	// is stdout, and the output file for ingest.
	run := func(b []byte, args []string) (code int, answer, stderr string) {
		os.WriteFile(db, b, 0o600)
		os.WriteFile(dbOut, goodOut, 0o644)
		code, stdout, stderr := runCLI(t, "", args...)
		stdout = strings.ReplaceAll(stdout, db, "DB")
		return code, stdout + "\n" + string(readFile(t, dbOut)), stderr
	}
	want := make([]string, len(commands))
	for i, args := range commands {
		code, ans, stderr := run(goodBytes, args)
		if code != 0 {
			t.Fatalf("%q on the undamaged database: exit %d: %s", args, code, stderr)
		}
		want[i] = ans
	}
	recs := findRecords(t, good, "checkpoint", "walseq", "wal", "output", "quarantine")
	if len(recs) != 8 {
		t.Fatalf("found %d records, want 8", len(recs))
	}
	offsets := func(r storedRecord) []int { return []int{r.at, r.at + r.size/2} }
	if testing.Short() {
		offsets = func(r storedRecord) []int { return []int{r.at + r.size/2} }
	}
	failed := 0
	for _, rec := range recs {
		for _, at := range offsets(rec) {
			name := fmt.Sprintf("%s %s, byte %d", rec.bucket, rec.key, at-rec.at)
			bad := bytes.Clone(goodBytes)
			bad[at] ^= 0x02
			naming := fmt.Sprintf("bucket %s, key %s", rec.bucket, rec.key)
			for i, args := range commands {
				code, ans, stderr := run(bad, args)
				switch {
				case code == 0 && ans != want[i]:
					t.Errorf("%s: %q exits 0 with another answer", name, args[:4])
				case code == 0:
				case code != exitFailure || !strings.Contains(stderr, "database is corrupt: "+naming):
					t.Errorf("%s: %q: exit %d, stderr does not name the record:\n%s", name, args[:4], code, stderr)
				default:
					failed++
				}
			}
			os.WriteFile(db, bad, 0o600)
			r := testbin.Run(t, nil, "check", "--db", db)
			noPanic(t, r)
			if r.Code != exitFailure || !strings.Contains(r.Stdout, naming) || !strings.Contains(r.Stderr, "problem") {
				t.Errorf("%s: check: %v", name, r)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no command failed on any damaged record")
	}
}

// TestCheckUsageAndOpenErrors: check needs --db and takes no argument
// (exit 2); a missing database or one another process holds is a runtime
// failure (exit 1) saying so, after --lock-timeout; --help shows
// examples.
func TestCheckUsageAndOpenErrors(t *testing.T) {
	for _, args := range [][]string{{"check"}, {"check", "--db", "x.db", "extra"}, {"check", "--db", "x.db", "--max-problems", "0"}} {
		if code, _, stderr := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
	}
	expectFailure(t, exitFailure, nil, []string{"check", "--db", filepath.Join(t.TempDir(), "missing.db")}, "no database at this path")
	db, _ := ingestDB(t, mangledStream(t, 20, nil))
	p, err := recovery.Open(db, recovery.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	expectFailure(t, exitFailure, nil, []string{"check", "--db", db, "--lock-timeout", "200ms"}, "locked by another process", "gave up after ", "ms)", "check reads the file itself")
	_, help, _ := runCLI(t, "", "check", "--help")
	if !strings.Contains(help, "Examples:") || !strings.Contains(help, "cdclog check --db state.db --json") {
		t.Fatalf("check --help:\n%s", help)
	}
}
