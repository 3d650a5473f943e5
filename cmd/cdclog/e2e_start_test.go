package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/internal/testbin"
)

// TestIngestRefusesAnotherStartOnAnExistingDatabase: --start on an
// existing database was silently ignored, so the run went on from the
// database's start while the user believed another. A different --start
// is now refused (exit 1, naming both starts) before anything is written;
// the same --start, or none, goes on.
func TestIngestRefusesAnotherStartOnAnExistingDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	stream := `{"update":{"data":"a","time":2,"diff":1}}
{"progress":{"lower":2,"upper":3,"counts":[{"time":2,"count":1}]}}
`
	mustRunBin(t, strings.NewReader(stream), "--quiet", "ingest", "--db", db, "--start", "2")
	before := readFile(t, db)
	r := expectFailure(t, exitFailure, strings.NewReader(stream), []string{"ingest", "--db", db, "--start", "7"},
		"the database was created with start 2, not 7")
	if strings.Contains(r.Stderr, "ingest finished") || r.Stdout != "" {
		t.Errorf("a refused run reports or writes as if it ran:\n%s%s", r.Stdout, r.Stderr)
	}
	if after := readFile(t, db); !bytes.Equal(after, before) {
		t.Error("the refused run changed the database file")
	}
	for _, args := range [][]string{{"--start", "2"}, nil} {
		mustRunBin(t, strings.NewReader(stream), append([]string{"--quiet", "ingest", "--db", db}, args...)...)
	}
	if s := dbStatus(t, db); s.Frontier != 3 {
		t.Errorf("frontier %d, want 3", s.Frontier)
	}
}

// TestIngestRefusesAnExplicitStart0OnADatabaseWithAnother: --start 0 is
// a start too; recovery refuses it when Options.StartSet says it was
// given, as runIngest sets it from the command line.
func TestIngestRefusesAnExplicitStart0OnADatabaseWithAnother(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	mustRunBin(t, strings.NewReader(""), "--quiet", "ingest", "--db", db, "--start", "2")
	r := testbin.Run(t, strings.NewReader(""), "ingest", "--db", db, "--start", "0")
	if r.Code == 0 {
		t.Fatalf("an explicit --start 0 was accepted on a database created with start 2: %v", r)
	}
	if r.Code != exitFailure || !strings.Contains(r.Stderr, "the database was created with start 2, not 0") {
		t.Fatalf("%v", r)
	}
}

// TestServeRefusesAnotherStartOnAnExistingDatabase: serve's --start is
// checked as ingest's is, an explicit --start 0 included (serve did not
// set Options.StartSet, so --start 0 opened a database created with
// start 2 and served it as if from 0). A refused serve exits 1 before it
// says it serves.
func TestServeRefusesAnotherStartOnAnExistingDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	mustRunBin(t, strings.NewReader(""), "--quiet", "ingest", "--db", db, "--start", "2")
	for _, start := range []string{"0", "7"} {
		cmd, stdout, stderr := testbin.Command(t, nil, "serve", "--db", db, "--listen", "127.0.0.1:0", "--start", start)
		// Refused, serve exits at once; accepted, it would serve until
		// killed at the deadline. (stderr is not polled: the child writes
		// it concurrently.)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		r, err := testbin.KillWhen(ctx, cmd, stdout, stderr, func(time.Duration) bool { return false })
		cancel()
		if err != nil {
			t.Fatalf("serve --start %s on a database created with start 2 was still running after 15s (%v): %v", start, err, r)
		}
		if r.Signaled || r.Code != exitFailure || !strings.Contains(r.Stderr, "the database was created with start 2, not "+start) {
			t.Errorf("serve --start %s on a database created with start 2: %v", start, r)
		}
	}
}
