package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/inspect"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/store"
)

// inspect runs 'cdclog inspect --db db ARGS' and fails the test unless it
// exits 0.
func inspectDB(t *testing.T, db string, args ...string) string {
	t.Helper()
	code, out, stderr := runCLI(t, "", append([]string{"inspect", "--db", db}, args...)...)
	if code != 0 {
		t.Fatalf("inspect %q: exit %d: %s", args, code, stderr)
	}
	return out
}

// statusJSON decodes 'inspect status --json'.
func statusJSON(t *testing.T, db string) recovery.Status {
	t.Helper()
	var s recovery.Status
	if err := json.Unmarshal([]byte(inspectDB(t, db, "status", "--json")), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// wantLine fails unless text has a line "key: value" (any alignment).
func wantLine(t *testing.T, text, key, value string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key+":") + ` +` + regexp.QuoteMeta(value) + `$`)
	if !re.MatchString(text) {
		t.Fatalf("no line %q: %q in:\n%s", key, value, text)
	}
}

func TestInspectStatusNamesAWithheldProgressStatement(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 40, func(tm, k int) bool { return !(tm == 13 && k == -1) }))
	text := inspectDB(t, db) // status is the default view
	wantLine(t, text, "frontier", "13")
	wantLine(t, text, "first incomplete time", "13")
	wantLine(t, text, "why incomplete", "waiting for a progress statement covering time 13")
	s := statusJSON(t, db)
	if s.Frontier != 13 || s.FirstIncompleteTime == nil || *s.FirstIncompleteTime != 13 || s.Waiting != "progress" ||
		s.ExpectedUpdates != nil || s.Reason != "waiting for a progress statement covering time 13" {
		t.Fatalf("status: %+v", s)
	}
}

func TestInspectStatusNamesAWithheldUpdate(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 40, func(tm, k int) bool { return !(tm == 14 && k == 1) }))
	text := inspectDB(t, db, "status")
	wantLine(t, text, "frontier", "14")
	wantLine(t, text, "first incomplete time", "14")
	wantLine(t, text, "why incomplete", "time 14 holds 1 of 2 expected updates")
	s := statusJSON(t, db)
	if s.Frontier != 14 || s.FirstIncompleteTime == nil || *s.FirstIncompleteTime != 14 || s.Waiting != "updates" ||
		s.ExpectedUpdates == nil || *s.ExpectedUpdates != 2 || s.HeldUpdates != 1 || s.Reason != "time 14 holds 1 of 2 expected updates" {
		t.Fatalf("status: %+v", s)
	}
	// --json may also come before the view.
	if out := inspectDB(t, db, "--json", "status"); !strings.Contains(out, `"frontier": "14"`) {
		t.Fatalf("inspect --json status:\n%s", out)
	}
}

func TestInspectStatusCountsEverything(t *testing.T) {
	db, out := ingestDB(t, mangledStream(t, 40, nil))
	s := statusJSON(t, db)
	fi, _ := os.Stat(out)
	if s.Frontier != 40 || s.Duplicates+s.Stale == 0 || s.AcceptedUpdates != 60 || s.AcceptedProgress != 40 ||
		s.WAL.Entries != 100 || s.WAL.MinTime == nil || *s.WAL.MaxTime != 39 || s.OutputRecords == 0 ||
		s.OutputFileBytes != fi.Size() || s.FileBytes == 0 || s.LastCheckpoint == "" || s.SchemaVersion != store.SchemaVersion {
		t.Fatalf("status: %+v", s)
	}
	text := inspectDB(t, db)
	wantLine(t, text, "wal time range", "0 to 39")
	wantLine(t, text, "output records", u64(s.OutputRecords))
}

func TestInspectPendingListsExpectedAndHeldUpdates(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 20, func(tm, k int) bool { return !(tm == 13 && k == -1) && !(tm == 15 && k == 0) }))
	var got []inspect.PendingLine
	for _, line := range strings.Split(strings.TrimSpace(inspectDB(t, db, "pending", "--json")), "\n") {
		var p inspect.PendingLine
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, p)
	}
	// 13: one update, no count; 14: 2 of 2; 15: 2 of 3; 16 (count 0, no
	// updates) is not pending; 17, 18 and 19 are complete.
	if len(got) != 6 || got[0].Time != 13 || got[0].Expected != nil || got[0].Held != 1 ||
		got[2].Time != 15 || *got[2].Expected != 3 || got[2].Held != 2 {
		t.Fatalf("pending: %+v", got)
	}
	text := inspectDB(t, db, "pending")
	if !regexp.MustCompile(`(?m)^TIME +EXPECTED +HELD +MISSING$`).MatchString(text) ||
		!regexp.MustCompile(`(?m)^13 +unknown +1 +\?$`).MatchString(text) ||
		!regexp.MustCompile(`(?m)^15 +3 +2 +1$`).MatchString(text) {
		t.Fatalf("pending table:\n%s", text)
	}
	if out := inspectDB(t, db, "pending", "--limit", "2", "--json"); strings.Count(out, "\n") != 2 {
		t.Fatalf("--limit 2:\n%s", out)
	}
}

func TestInspectPendingOnACompleteStream(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 10, nil))
	if out := inspectDB(t, db, "pending"); out != "no pending times (frontier 10)\n" {
		t.Fatalf("pending: %q", out)
	}
	if out := inspectDB(t, db, "pending", "--json"); out != "" {
		t.Fatalf("pending --json: %q", out)
	}
}

func TestInspectWALFiltersByTime(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 20, nil))
	out := inspectDB(t, db, "wal", "--from-time", "5", "--to-time", "6", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Time 5 has 1 update, time 6 has 2, and each a progress statement;
	// duplicates are not logged.
	if len(lines) != 5 {
		t.Fatalf("want 5 entries, got:\n%s", out)
	}
	for _, line := range lines {
		var e struct {
			Time    uint64          `json:"time,string"`
			Arrival uint64          `json:"arrival"`
			Source  string          `json:"source"`
			Line    int64           `json:"line"`
			Message json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if e.Time < 5 || e.Time > 6 || !strings.HasSuffix(e.Source, "in.jsonl") || e.Line == 0 ||
			!(bytes.HasPrefix(e.Message, []byte(`{"update":`)) || bytes.HasPrefix(e.Message, []byte(`{"progress":`))) {
			t.Fatalf("entry %q", line)
		}
	}
	if out := inspectDB(t, db, "wal", "--limit", "3", "--json"); strings.Count(out, "\n") != 3 {
		t.Fatalf("--limit 3:\n%s", out)
	}
	text := inspectDB(t, db, "wal", "--from-time", "6", "--to-time", "6")
	if !regexp.MustCompile(`(?m)^TIME +ARRIVAL +POSITION +MESSAGE$`).MatchString(text) ||
		!regexp.MustCompile(`(?m)^6 +\d+ +\S*in\.jsonl:\d+ +progress\[6, 7\)\{6:2\}$`).MatchString(text) {
		t.Fatalf("wal table:\n%s", text)
	}
	if out := inspectDB(t, db, "wal", "--from-time", "20"); out != "no WAL entries in the time range\n" {
		t.Fatalf("empty range: %q", out)
	}
	if code, _, stderr := runCLI(t, "", "inspect", "--db", db, "wal", "--from-time", "7", "--to-time", "6"); code != exitUsage {
		t.Fatalf("--to-time before --from-time: exit %d: %s", code, stderr)
	}
}

func TestInspectOutputShowsSequenceNumbers(t *testing.T) {
	db, outFile := ingestDB(t, mangledStream(t, 20, nil))
	file, _ := os.ReadFile(outFile)
	want := strings.Split(string(file), "\n")
	out := inspectDB(t, db, "output", "--from-seq", "3", "--limit", "2", "--json")
	var got []inspect.OutputLine
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var o inspect.OutputLine
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, o)
	}
	if len(got) != 2 || got[0].Seq != 3 || got[1].Seq != 4 || string(got[0].Message) != want[2] || string(got[1].Message) != want[3] {
		t.Fatalf("output --from-seq 3 --limit 2:\n%s\nwant records 3 and 4 of:\n%s", out, file)
	}
	if out := inspectDB(t, db, "output", "--from-seq", "100000"); out != "no output records from this sequence number on\n" {
		t.Fatalf("past the end: %q", out)
	}
	text := inspectDB(t, db, "output", "--limit", "1")
	if !regexp.MustCompile(`^SEQ +MESSAGE\n1 +(update\(|progress\[)\S.*\n$`).MatchString(text) {
		t.Fatalf("output table:\n%q", text)
	}
}

func TestInspectQuarantineShowsRejectedInput(t *testing.T) {
	lines := cleanLines(10, nil)
	bad := `{"update":{"data":"x","time":-1,"diff":1}}`
	lines = append(lines[:4], append([]string{bad}, lines[4:]...)...) // line 5
	db, _ := ingestDB(t, strings.Join(lines, "\n")+"\n", "--on-error", "quarantine")
	out := inspectDB(t, db, "quarantine", "--json")
	var q inspect.QuarantineLine
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if q.Seq != 1 || !strings.HasSuffix(q.Source, "in.jsonl") || q.Line != 5 || q.Raw != bad ||
		!strings.Contains(q.Reason, "negative") || q.Time == "" {
		t.Fatalf("quarantine: %+v", q)
	}
	text := inspectDB(t, db, "quarantine")
	if !regexp.MustCompile(`(?m)^1 +\S*in\.jsonl:5 +update: "time" is negative \(-1\) +"\{\\"update\\"`).MatchString(text) {
		t.Fatalf("quarantine table:\n%s", text)
	}
	wantLine(t, inspectDB(t, db), "quarantined", "1")
	clean, _ := ingestDB(t, mangledStream(t, 5, nil))
	if out := inspectDB(t, clean, "quarantine"); out != "no quarantined messages\n" {
		t.Fatalf("empty quarantine: %q", out)
	}
}

// fileState is what a read-only command must not change.
type fileState struct {
	content []byte
	mtime   time.Time
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	b, err := os.ReadFile(path)
	fi, serr := os.Stat(path)
	if err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return fileState{b, fi.ModTime()}
}

func TestReadOnlyCommandsDoNotChangeTheDatabase(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 30, func(tm, k int) bool { return tm != 20 }))
	// An mtime changed by a write would differ from a past one.
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(db, past, past); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, db)
	for _, args := range [][]string{
		{"inspect", "--db", db}, {"inspect", "--db", db, "status", "--json"},
		{"inspect", "--db", db, "pending"}, {"inspect", "--db", db, "wal"}, {"inspect", "--db", db, "wal", "--json"},
		{"inspect", "--db", db, "output"}, {"inspect", "--db", db, "quarantine", "--json"},
		{"replay", "--db", db}, {"replay", "--db", db, "--rederive"}, {"replay", "--db", db, "--verify"},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		after := stateOf(t, db)
		if !bytes.Equal(after.content, before.content) || !after.mtime.Equal(before.mtime) {
			t.Fatalf("%q changed the database", args)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(db)); len(entries) != 3 { // state.db, in.jsonl, out.jsonl
		t.Fatalf("read-only commands left files behind: %v", entries)
	}
}

func TestDatabaseCommandsReportTheLockQuickly(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 10, nil))
	p, err := recovery.Open(db, recovery.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, args := range [][]string{
		{"inspect", "--db", db, "--lock-timeout", "200ms"},
		{"inspect", "--db", db, "wal", "--lock-timeout", "200ms"},
		{"replay", "--db", db, "--lock-timeout", "200ms"},
		{"replay", "--db", db, "--verify", "--lock-timeout", "200ms"},
		{"gc", "--db", db, "--lock-timeout", "200ms"},
	} {
		start := time.Now()
		code, out, stderr := runCLI(t, "", args...)
		if code != exitFailure || out != "" || !strings.Contains(stderr, "locked by another process") ||
			!strings.Contains(stderr, "--lock-timeout") {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%q took %v to report the lock", args, d)
		}
	}
}

func TestDatabaseCommandsOnAMissingOrForeignFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	foreign := writeFile(t, dir, "foreign.db", strings.Repeat("not a database\n", 1000))
	for _, args := range [][]string{
		{"inspect", "--db", missing}, {"replay", "--db", missing}, {"gc", "--db", missing},
	} {
		code, _, stderr := runCLI(t, "", args...)
		if code != exitFailure || !strings.Contains(stderr, "no database at this path") {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("a command created the missing database")
	}
	for _, args := range [][]string{{"inspect", "--db", foreign}, {"replay", "--db", foreign}, {"gc", "--db", foreign}} {
		code, _, stderr := runCLI(t, "", args...)
		if code != exitFailure || !strings.Contains(stderr, "not a cdclog database") {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
	}
}

func TestInspectUsageErrors(t *testing.T) {
	db, _ := ingestDB(t, mangledStream(t, 5, nil))
	for _, args := range [][]string{
		{"inspect"}, {"inspect", "status"}, {"inspect", "--db", db, "bogus"},
		{"inspect", "--db", db, "status", "extra"}, {"inspect", "--db", db, "wal", "--bogus"},
		{"inspect", "--db", db, "output", "--limit", "x"},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != exitUsage {
			t.Fatalf("%q: exit %d, want %d: %s", args, code, exitUsage, stderr)
		}
	}
	// --db is accepted after the view too.
	wantLine(t, inspectDB(t, db, "status"), "frontier", "5")
	if code, out, stderr := runCLI(t, "", "inspect", "status", "--db", db); code != 0 || !strings.Contains(out, "frontier:") {
		t.Fatalf("inspect status --db: exit %d: %s", code, stderr)
	}
}

func TestEveryDatabaseCommandHasHelpWithExamples(t *testing.T) {
	for _, args := range [][]string{
		{"inspect"}, {"inspect", "status"}, {"inspect", "pending"}, {"inspect", "wal"},
		{"inspect", "output"}, {"inspect", "quarantine"}, {"replay"}, {"gc"},
	} {
		code, out, stderr := runCLI(t, "", append(args, "--help")...)
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "cdclog "+strings.Join(args, " ")) {
			t.Fatalf("%q --help: exit %d: %s%s", args, code, out, stderr)
		}
	}
}

// TestInspectViewsTable: every row of inspectViews is a subcommand of
// inspect with its own help, named in inspect's usage line and in the
// error on an unknown view, and refuses arguments.
func TestInspectViewsTable(t *testing.T) {
	cmd := inspectCommand()
	_, _, stderr := runCLI(t, "", "inspect", "--db", "x.db", "zzzzzzzz")
	for _, v := range inspectViews() {
		sub := cmd.Command(v.name)
		if sub == nil || sub.Description != helpText("inspect-"+v.name) || sub.Description == "" {
			t.Errorf("view %s: no subcommand with help/inspect-%s.txt", v.name, v.name)
			continue
		}
		if !strings.Contains(cmd.UsageText, v.name) || !strings.Contains(stderr, v.name) {
			t.Errorf("view %s is missing from the usage %q or the unknown-view error %q", v.name, cmd.UsageText, stderr)
		}
		want := "inspect " + v.name + " takes no arguments"
		if code, _, stderr := runCLI(t, "", "inspect", "--db", "x.db", v.name, "extra"); code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("inspect %s extra: exit %d: %s", v.name, code, stderr)
		}
	}
	if !strings.Contains(stderr, "(want status, pending, wal, output, quarantine or consumers)") {
		t.Errorf("unknown view: %s", stderr)
	}
}
