package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/recovery"
)

// fourMessages is a 4-message stream: two updates and the progress that
// completes them.
const fourMessages = `{"update":{"data":"a","time":0,"diff":1}}
{"update":{"data":"b","time":1,"diff":1}}
{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}
{"progress":{"lower":1,"upper":2,"counts":[{"time":1,"count":1}]}}
`

// TestLockTimeoutZeroDoesNotWaitAndNegativeIsAUsageError: --lock-timeout
// 0 waited 3 s and then said "gave up after 0s". Now 0 tries the lock
// once, a negative value is a usage error, and the error says how long
// the command waited.
func TestLockTimeoutZeroDoesNotWaitAndNegativeIsAUsageError(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 10, nil))
	p, err := recovery.Open(db, recovery.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	commands := [][]string{
		{"ingest", "--db", db}, {"inspect", "--db", db, "status"}, {"replay", "--db", db}, {"gc", "--db", db},
	}
	for _, args := range commands {
		r := expectFailure(t, exitFailure, strings.NewReader(""), append(args, "--lock-timeout", "0"),
			"locked by another process (tried once, without waiting)")
		if r.Elapsed > 2*time.Second {
			t.Errorf("%q --lock-timeout 0: gave up after %v", args, r.Elapsed)
		}
		// Not "after 300ms": under load the wait overruns (408-486ms seen).
		r = expectFailure(t, exitFailure, strings.NewReader(""), append(args, "--lock-timeout", "300ms"),
			"locked by another process (gave up after ")
		if r.Elapsed < 300*time.Millisecond {
			t.Errorf("%q --lock-timeout 300ms: gave up after %v", args, r.Elapsed)
		}
		expectFailure(t, exitUsage, strings.NewReader(""), append(args, "--lock-timeout", "-1s"), "--lock-timeout -1s")
	}
}

// TestDatabaseFileErrors: an error for a missing directory names the
// path once; an empty file at the path (what a power loss while an older
// cdclog created the database could leave) is no database to the
// commands that only read, and a new database to ingest, which says so.
func TestDatabaseFileErrors(t *testing.T) {
	dir := t.TempDir()
	nodir := filepath.Join(dir, "nodir", "x.db")
	r := expectFailure(t, exitFailure, strings.NewReader(fourMessages), []string{"ingest", "--db", nodir})
	if want := "cdclog: open " + nodir + ": no such file or directory\n"; r.Stderr != want {
		t.Errorf("stderr %q, want %q", r.Stderr, want)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"inspect", "--db", empty}, {"replay", "--db", empty}} {
		expectFailure(t, exitFailure, nil, args, "no database at this path", "no committed cdclog state (the file is empty)")
	}
	r = mustRunBin(t, strings.NewReader(fourMessages), "ingest", "--db", empty)
	if !strings.Contains(r.Stderr, "holds no committed state: replacing it with a new database") {
		t.Errorf("ingest does not say it replaced the empty file:\n%s", r.Stderr)
	}
	if s := dbStatus(t, empty); s.Frontier != 2 {
		t.Errorf("frontier %d after the 4 messages, want 2", s.Frontier)
	}
}

// TestASmallStreamMakesASmallDatabase: a database holding 4 messages was
// 16 MiB (bbolt grows the file 16 MiB past what it needs); growth is now
// in proportion to what the file holds.
func TestASmallStreamMakesASmallDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	mustRunBin(t, strings.NewReader(fourMessages), "--quiet", "ingest", "--db", db)
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 256<<10 {
		t.Fatalf("4 messages make a %d-byte database", fi.Size())
	}
	t.Logf("4 messages: %d bytes", fi.Size())
}
