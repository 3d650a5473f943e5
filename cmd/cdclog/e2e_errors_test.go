package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/recovery"
)

// TestAMissingDirectoryIsNamedOnce: errors for a path in a directory
// that does not exist read "open nodir/x.db: open nodir/x.db: ...". Every
// command that takes a path now names it once, in its last line.
func TestAMissingDirectoryIsNamedOnce(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "in.jsonl", fourMessages)
	db := filepath.Join(dir, "state.db")
	mustRunBin(t, nil, "--quiet", "ingest", "--db", db, in)
	missing := filepath.Join(dir, "nodir", "x")
	for _, args := range [][]string{
		{"ingest", "--db", missing, in},
		{"inspect", "--db", missing, "status"},
		{"replay", "--db", missing},
		{"gc", "--db", missing},
		{"check", "--db", missing},
		{"ingest", "--db", filepath.Join(dir, "other.db"), "--out", missing, in},
		{"demangle", "--on-error", "quarantine", "--quarantine", missing, in},
		{"merge", "--on-error", "quarantine", "--quarantine", missing, in},
		{"demangle", missing},
		{"merge", missing},
	} {
		r := testbin.Run(t, nil, args...)
		last := lastLine(r.Stderr)
		if r.Code != exitFailure || strings.Count(r.Stderr, missing) != 1 || !strings.Contains(last, missing) {
			t.Errorf("%q: exit %d, stderr naming %s %d times, want once in the error:\n%s",
				args, r.Code, missing, strings.Count(r.Stderr, missing), r.Stderr)
		}
	}
}

// TestIngestOfAMissingInputFileCreatesNoDatabase: 'ingest --db new.db
// nosuch.jsonl' created new.db (16 MiB then) before failing on the
// input. Every input is opened before the database is created.
func TestIngestOfAMissingInputFileCreatesNoDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "state.db")
	in := writeFile(t, dir, "in.jsonl", fourMessages)
	expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, in, filepath.Join(dir, "nosuch.jsonl")}, "nosuch.jsonl")
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the database was created: %v", err)
	}
}

// TestIngestOfAMissingInputFileReportsOnlyTheError: issue 15.5 saw
// 'ingest --db s.db nosuch.jsonl' log "ingest finished ... messages=0"
// before the open error, a summary of a run that never started.
func TestIngestOfAMissingInputFileReportsOnlyTheError(t *testing.T) {
	dir := t.TempDir()
	nosuch := filepath.Join(dir, "nosuch.jsonl")
	r := expectFailure(t, exitFailure, nil, []string{"ingest", "--db", filepath.Join(dir, "state.db"), nosuch}, nosuch)
	if strings.Contains(r.Stderr, "ingest finished") {
		t.Errorf("a summary of a run that never started:\n%s", r.Stderr)
	}
	if want := "cdclog: open input: open " + nosuch + ": no such file or directory\n"; r.Stderr != want {
		t.Errorf("stderr %q, want %q", r.Stderr, want)
	}
}

// TestAFullStreamIsAnOutputErrorNotAStorageFailure: a stdout, or an
// --out device, that fails with ENOSPC (/dev/full) ends ingest with one
// line naming the stream's error and what is committed, exit 1, never
// "storage failure"; what was committed stays, and the next run with a
// working stdout writes it.
func TestAFullStreamIsAnOutputErrorNotAStorageFailure(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	fx := newOutputFixture(t, 200, 1)
	for _, tc := range []struct {
		name string
		out  []string
	}{{"stdout", nil}, {"--out /dev/full", []string{"--out", "/dev/full"}}} {
		t.Run(tc.name, func(t *testing.T) {
			db := fx.path(strings.ReplaceAll(tc.name, "/", "_") + ".db")
			cmd, _, stderr := testbin.Command(t, nil, append(append([]string{"ingest", "--db", db}, tc.out...), fx.parts[0])...)
			cmd.Stdout = full
			r := testbin.Finish(cmd, cmd.Run(), nil, stderr, 0)
			last := lastLine(r.Stderr)
			if r.Code != exitFailure || !strings.HasPrefix(last, "cdclog: writing the output stream failed: ") ||
				!strings.Contains(last, "no space left on device") || strings.Contains(r.Stderr, "storage failure") {
				t.Fatalf("want exit 1 and a one-line stream error, not a storage failure: %v", r)
			}
			if !strings.Contains(last, "'cdclog replay --db "+db+" --from-seq 1'") {
				t.Errorf("the error does not say how to get the committed records: %s", last)
			}
			if got := storedOutput(t, db, cdc.JSONL); !bytes.Equal(got, fx.clean[0]) {
				t.Fatalf("committed output: %s", firstDifference(got, fx.clean[0]))
			}
			r = mustRunBin(t, nil, "--quiet", "ingest", "--db", db, fx.parts[0])
			if r.Stdout != string(fx.clean[0]) {
				t.Errorf("the next run wrote %d bytes, want the %d the full stream missed", len(r.Stdout), len(fx.clean[0]))
			}
		})
	}
}

// TestAnOverlongQuarantinedLineKeepsItsFirstKiB: a line past the 16 MiB
// message limit was quarantined with no bytes at all. ingest's quarantine
// and demangle's quarantine file now keep its first KiB and say it is
// truncated, as merge does.
func TestAnOverlongQuarantinedLineKeepsItsFirstKiB(t *testing.T) {
	dir := t.TempDir()
	long := `{"update":{"data":"` + strings.Repeat("x", cdc.MaxMessageSize) + `","time":0,"diff":1}}`
	in := writeFile(t, dir, "in.jsonl", long+"\n"+fourMessages)
	head := long[:cdc.RejectHead]

	db := filepath.Join(dir, "state.db")
	mustRunBin(t, nil, "--quiet", "ingest", "--db", db, "--on-error", "quarantine", in)
	q := quarantined(t, db)
	if len(q) != 1 || string(q[0].Raw) != head || !q[0].Truncated || q[0].Pos.Line != 1 {
		t.Fatalf("quarantine holds %d records, the first with %d bytes (truncated %v); want 1 with the line's first KiB", len(q), rawLen(q), len(q) > 0 && q[0].Truncated)
	}
	r := mustRunBin(t, nil, "inspect", "--db", db, "quarantine", "--json")
	var line cdc.RejectLine
	if err := json.Unmarshal([]byte(r.Stdout), &line); err != nil || line.Raw != head || !line.Truncated {
		t.Errorf("inspect quarantine --json: %v, %d raw bytes, truncated %v", err, len(line.Raw), line.Truncated)
	}

	qfile := filepath.Join(dir, "q.jsonl")
	mustRunBin(t, nil, "--quiet", "demangle", "--on-error", "quarantine", "--quarantine", qfile, in)
	line = cdc.RejectLine{}
	if err := json.Unmarshal(readFile(t, qfile), &line); err != nil || line.Raw != head || !line.Truncated || line.Line != 1 {
		t.Errorf("demangle's quarantine file: %v, %d raw bytes, truncated %v, line %d", err, len(line.Raw), line.Truncated, line.Line)
	}
}

func rawLen(q []recovery.QuarantineRecord) int {
	if len(q) == 0 {
		return 0
	}
	return len(q[0].Raw)
}
