package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/recovery"
	bolt "go.etcd.io/bbolt"
)

// smallStream writes a stream of about 45k messages to dir/in.jsonl and
// returns its path and its clean stream.
func smallStream(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 3, Times: 10_000})
	return in, inMemoryClean(t, in, cdc.JSONL)
}

// waitLocked polls until another process holds the database at path.
func waitLocked(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := recovery.OpenReader(path, 20*time.Millisecond)
		if err == nil {
			r.Close()
		}
		if errors.Is(err, recovery.ErrLocked) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database was never locked: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIngestGivesUpOnALockedDatabase: a second ingest on a database that
// another process holds fails with "locked by another process" and exit
// code 1 after the lock timeout (3 s by default, --lock-timeout), instead
// of waiting; the holder is unaffected and the database usable after it.
func TestIngestGivesUpOnALockedDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, want := smallStream(t, dir)
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")

	t.Run("held by another ingest", func(t *testing.T) {
		// The holder reads stdin, which the test keeps open.
		holder, _, herr := testbin.Command(t, nil, "ingest", "--db", db)
		feed, err := holder.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := holder.Start(); err != nil {
			t.Fatal(err)
		}
		defer holder.Process.Kill()
		waitLocked(t, db)
		r := expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, "--out", out, in}, "locked by another process", db,
			fmt.Sprintf("cdclog process %d is writing it", holder.Process.Pid), fmt.Sprintf("kill -TERM %d stops it cleanly", holder.Process.Pid))
		if r.Elapsed < 2*time.Second || r.Elapsed > 15*time.Second {
			t.Errorf("gave up after %v, want the default lock timeout of 3 s", r.Elapsed)
		}
		feed.Close()
		if err := holder.Wait(); err != nil {
			t.Fatalf("the holder: %v\n%s", err, herr)
		}
	})

	t.Run("held by the embedded API", func(t *testing.T) {
		p, err := recovery.Open(db, recovery.Options{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		r := expectFailure(t, exitFailure, nil, []string{"ingest", "--lock-timeout", "300ms", "--db", db, "--out", out, in}, "locked by another process")
		if r.Elapsed > 5*time.Second {
			t.Errorf("gave up after %v with --lock-timeout 300ms", r.Elapsed)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	})

	mustRunBin(t, nil, "ingest", "--db", db, "--out", out, in)
	if got := readFile(t, out); !bytes.Equal(got, want) {
		t.Fatalf("after the lock was released: %s", firstDifference(got, want))
	}
}

// TestIngestRefusesAForeignFileAsDatabase: a text file, random bytes and
// another program's bbolt database given as --db are refused with "not a
// cdclog database" and exit code 1, and left byte for byte as they were.
func TestIngestRefusesAForeignFileAsDatabase(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 3, Times: 100})
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("shopping list\n- milk\n"), 0o644)
	random := filepath.Join(dir, "random.bin")
	junk := make([]byte, 256<<10)
	for i := range junk {
		junk[i] = byte(i*131 + i>>8)
	}
	os.WriteFile(random, junk, 0o644)
	other := filepath.Join(dir, "other.db")
	bdb, err := bolt.Open(other, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	bdb.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("users"))
		if err != nil {
			return err
		}
		return b.Put([]byte("alice"), []byte("admin"))
	})
	bdb.Close()
	for _, path := range []string{text, random, other} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			before := readFile(t, path)
			out := filepath.Join(t.TempDir(), "out.jsonl")
			expectFailure(t, exitFailure, nil, []string{"ingest", "--db", path, "--out", out, in}, "not a cdclog database", path)
			if after := readFile(t, path); !bytes.Equal(after, before) {
				t.Fatal("the file was modified")
			}
			if _, err := recovery.OpenReader(path, 0); !errors.Is(err, recovery.ErrForeign) {
				t.Fatalf("OpenReader: %v, want ErrForeign", err)
			}
		})
	}
}

// TestIngestRerunOnAFinishedDatabaseIsANoOp: rerunning the same command on
// a finished database reads nothing, writes nothing, exits 0, and leaves
// the output file and the database's counts as they were.
func TestIngestRerunOnAFinishedDatabaseIsANoOp(t *testing.T) {
	dir := t.TempDir()
	in, want := smallStream(t, dir)
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	args := []string{"ingest", "--db", db, "--out", out, in}
	mustRunBin(t, nil, args...)
	before := dbStatus(t, db)
	r := mustRunBin(t, nil, args...)
	if !strings.Contains(r.Stderr, "input already ingested") || logField(r.Stderr, "ingest finished", "messages") != "0" {
		t.Errorf("the rerun read input:\n%s", r.Stderr)
	}
	if got := readFile(t, out); !bytes.Equal(got, want) {
		t.Fatalf("the rerun changed the output: %s", firstDifference(got, want))
	}
	after := dbStatus(t, db)
	before.LastCheckpoint, after.LastCheckpoint = "", ""
	before.FileBytes, after.FileBytes = 0, 0
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(after)
	if !bytes.Equal(a, b) {
		t.Fatalf("the rerun changed the database:\nbefore %s\nafter  %s", b, a)
	}
}

// TestIngestResumesFromTheCommittedInputOffset: after a kill, the rerun
// seeks to the input offset committed with the last batch: it reads only
// the lines after it (its message count is the file's minus the committed
// lines) and the output is still exactly the clean stream.
func TestIngestResumesFromTheCommittedInputOffset(t *testing.T) {
	dir := t.TempDir()
	in, want := smallStream(t, dir)
	total := bytes.Count(readFile(t, in), []byte("\n"))
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	args := []string{"ingest", "--batch-messages", "2000", "--db", db, "--out", out, in}
	for attempt := 0; ; attempt++ {
		cmd, stdout, stderr := testbin.Command(t, nil, args...)
		r, err := testbin.KillWhen(context.Background(), cmd, stdout, stderr,
			func(time.Duration) bool { return sizeOrMinusOne(out) >= int64(len(want))/2 })
		if err != nil {
			t.Fatal(err)
		}
		if r.Signaled {
			break
		}
		if attempt == 5 {
			t.Fatalf("ingest finished before the kill %d times", attempt+1)
		}
		os.Remove(db)
		os.Remove(out)
	}
	r := mustRunBin(t, nil, args...)
	line, err := strconv.Atoi(logField(r.Stderr, "resuming input", "line"))
	if err != nil || line <= 1 {
		t.Fatalf("the rerun did not resume (line %d, %v):\n%s", line, err, r.Stderr)
	}
	read, _ := strconv.Atoi(logField(r.Stderr, "ingest finished", "messages"))
	if read != total-(line-1) {
		t.Fatalf("the rerun resumed at line %d and read %d messages, want the %d after line %d", line, read, total-(line-1), line-1)
	}
	if got := readFile(t, out); !bytes.Equal(got, want) {
		t.Fatalf("output after the resumed run: %s", firstDifference(got, want))
	}
}

// TestIngestFromStdinAgainDropsCommittedInputAsDuplicates: stdin cannot be
// resumed, so a producer sends again from the start; after a kill, a rerun
// on stdin with the input sent twice over drops everything committed as
// duplicates, and a third run on the same input accepts and emits
// nothing; the output is the clean stream throughout.
func TestIngestFromStdinAgainDropsCommittedInputAsDuplicates(t *testing.T) {
	dir := t.TempDir()
	in, want := smallStream(t, dir)
	data := readFile(t, in)
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	args := []string{"ingest", "--db", db, "--out", out}
	cmd, stdout, stderr := testbin.Command(t, bytes.NewReader(data), args...)
	r, err := testbin.KillWhen(context.Background(), cmd, stdout, stderr,
		func(time.Duration) bool { return sizeOrMinusOne(out) >= int64(len(want))/3 })
	if err != nil {
		t.Fatal(err)
	}
	committed := dbStatus(t, db)
	t.Logf("first run: %v; %d output records committed", r, committed.OutputRecords)

	twice := append(append([]byte(nil), data...), data...)
	r = mustRunBin(t, bytes.NewReader(twice), args...)
	if got := readFile(t, out); !bytes.Equal(got, want) {
		t.Fatalf("output after the rerun on stdin: %s", firstDifference(got, want))
	}
	dups, _ := strconv.Atoi(logField(r.Stderr, "ingest finished", "duplicates"))
	stale, _ := strconv.Atoi(logField(r.Stderr, "ingest finished", "stale"))
	if msgs := bytes.Count(data, []byte("\n")); dups+stale < msgs {
		t.Errorf("the rerun counted %d duplicates and %d stale messages, want at least the %d messages sent the second time", dups, stale, msgs)
	}
	r = mustRunBin(t, bytes.NewReader(data), args...)
	if a, o := logField(r.Stderr, "ingest finished", "accepted"), logField(r.Stderr, "ingest finished", "records_out"); a != "0" || o != "0" {
		t.Errorf("a run on input already committed accepted %s messages and emitted %s records", a, o)
	}
	if got := readFile(t, out); !bytes.Equal(got, want) {
		t.Fatalf("output after the third run: %s", firstDifference(got, want))
	}
}
