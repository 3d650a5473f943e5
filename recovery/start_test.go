package recovery

import (
	"errors"
	"testing"
)

// TestOpenRefusesAStartThatDiffersFromTheDatabases: Options.Start was
// ignored for an existing database, so a caller asking for another start
// went on from the old one without knowing. Open now refuses a different
// start with a *StartError naming both, and opens with the same start,
// with none (zero), and with an explicit zero only on a database that
// starts at 0.
func TestOpenRefusesAStartThatDiffersFromTheDatabases(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{Start: 5})
	appendAll(t, p, cleanStream(1, 5, 20), 10)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		o      Options
		refuse bool
	}{
		{"another start", Options{Start: 7}, true},
		{"an explicit start 0", Options{StartSet: true}, true},
		{"the same start", Options{Start: 5}, false},
		{"the same start, explicitly", Options{Start: 5, StartSet: true}, false},
		{"no start", Options{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Logger = quietLogger()
			p, err := Open(path, tc.o)
			if !tc.refuse {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if f, _ := p.Frontier(); f != 20 {
					t.Errorf("frontier %d, want 20", f)
				}
				p.Close()
				return
			}
			if err == nil {
				p.Close()
				t.Fatal("opened")
			}
			var se *StartError
			if !errors.As(err, &se) || !errors.Is(err, ErrStartMismatch) || se.Start != 5 || se.Requested != tc.o.Start {
				t.Fatalf("error %v (%T), want a StartError with start 5, requested %d", err, err, tc.o.Start)
			}
			want := "open " + path + ": the database was created with start 5, not "
			if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
				t.Errorf("error %q, want it to start %q", got, want)
			}
		})
	}
	zero := dbPath(t)
	openTest(t, zero, Options{}).Close()
	openTest(t, zero, Options{StartSet: true}).Close() // an explicit 0 on a database from 0
}

// TestTheStartOfADatabaseFromBeforeItWasRecordedIsInferred: a checkpoint
// written before the start was recorded has none; Open infers it (the
// frontier before the first release, the first progress record's lower
// bound after), checks it the same way and records it.
func TestTheStartOfADatabaseFromBeforeItWasRecordedIsInferred(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs int // of cleanStream(1, 9, 30), appended before the start is forgotten
	}{
		{"nothing released yet", 0},
		{"after releases", 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := dbPath(t)
			p := openTest(t, path, Options{Start: 9})
			msgs := cleanStream(1, 9, 30)
			appendAll(t, p, msgs[:tc.msgs], 10)
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			// As a checkpoint written before the start was recorded.
			editCheckpoint(t, path, func(cp *checkpoint) { cp.Start, cp.StartKnown = 0, false })
			if _, err := Open(path, Options{Start: 3, Logger: quietLogger()}); !errors.Is(err, ErrStartMismatch) {
				t.Fatalf("start 3 on a database from start 9: %v", err)
			}
			p = openTest(t, path, Options{Start: 9})
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if cp := checkpointOf(t, path); !cp.StartKnown || cp.Start != 9 {
				t.Errorf("checkpoint start %d (known %v) after Open, want 9 recorded", cp.Start, cp.StartKnown)
			}
		})
	}
}

// TestTheStartOfASchema1DatabaseIsItsFirstReleasesLowerBound: the
// schema 1 database in testdata was made from start 0.
func TestTheStartOfASchema1DatabaseIsItsFirstReleasesLowerBound(t *testing.T) {
	path := schema1Copy(t)
	if _, err := Open(path, Options{Start: 1, Logger: quietLogger()}); !errors.Is(err, ErrStartMismatch) {
		t.Fatalf("start 1 on the schema 1 database: %v", err)
	}
	p := openTest(t, path, Options{StartSet: true})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
