package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// badInput is a generated stream with one bad line, for the --on-error
// tests: long enough that the bad line lies well past the first 64 KiB
// (which ingest fingerprints) and behind many requests in flight.
type badInput struct {
	dir     string
	good    []byte // the stream without fault
	bad     []byte // the stream with line Line replaced
	line    int    // 1-based number of the bad line
	offset  int    // its byte offset
	badLine []byte // its content, without the newline
}

// errorStream returns the good stream of the --on-error tests.
func errorStream(t *testing.T, dir string) []byte {
	t.Helper()
	path := filepath.Join(dir, "good.jsonl")
	writeTestStream(t, path, cdc.JSONL, streamSpec{Seed: 11, Times: 12_000})
	return readFile(t, path)
}

// withLine returns data with line n (1-based) replaced by repl, and the
// offset of that line.
func withLine(data []byte, n int, repl []byte) ([]byte, int) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	off := 0
	for _, l := range lines[:n-1] {
		off += len(l)
	}
	out := make([]byte, 0, len(data)+len(repl))
	for i, l := range lines {
		if i == n-1 {
			out = append(append(out, repl...), '\n')
			continue
		}
		out = append(out, l...)
	}
	return out, off
}

// withoutLine returns data without line n.
func withoutLine(data []byte, n int) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	return bytes.Join(append(lines[:n-1:n-1], lines[n:]...), nil)
}

// malformedInput replaces a line in the middle with malformed JSON.
func malformedInput(t *testing.T, dir string, good []byte) badInput {
	n := bytes.Count(good, []byte("\n")) * 3 / 5
	b := badInput{dir: dir, good: good, line: n, badLine: []byte(`{"update": {"data": [1, 2,], "time": 1, "diff": 1}}`)}
	b.bad, b.offset = withLine(good, n, b.badLine)
	return b
}

var diffRE = regexp.MustCompile(`"diff":(-?\d+)`)

// violationInput replaces, past the middle, a repeated update with one of
// the same data and time and another diff: a protocol violation
// (conflicting-diff) at that line, checked with the in-memory receiver.
func violationInput(t *testing.T, dir string, good []byte) badInput {
	t.Helper()
	lines := bytes.Split(good, []byte("\n"))
	seen := map[string]bool{}
	for i, l := range lines {
		n := i + 1
		if n < len(lines)*3/5 || !bytes.HasPrefix(l, []byte(`{"update"`)) || !seen[string(l)] {
			seen[string(l)] = true
			continue
		}
		m := diffRE.FindSubmatch(l)
		d, _ := strconv.Atoi(string(m[1]))
		repl := diffRE.ReplaceAll(l, []byte(fmt.Sprintf(`"diff":%d`, d+10)))
		b := badInput{dir: dir, good: good, line: n, badLine: repl}
		b.bad, b.offset = withLine(good, n, repl)
		path := filepath.Join(dir, "probe.jsonl")
		os.WriteFile(path, b.bad, 0o644)
		code, _, stderr := runCLI(t, "", "--quiet", "demangle", path)
		if code == exitViolation && strings.Contains(stderr, fmt.Sprintf("%s:%d: protocol violation (conflicting-diff)", path, n)) {
			return b
		}
	}
	t.Fatal("found no line to turn into a protocol violation")
	return badInput{}
}

// cleanOf is the clean stream of data, by the in-memory receiver.
func cleanOf(t *testing.T, dir string, data []byte) []byte {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("clean-of-%d.jsonl", len(data)))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return inMemoryClean(t, path, cdc.JSONL)
}

// lineCount returns how many lines of data come before line n.
func prefixLines(data []byte, n int) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	return bytes.Join(lines[:n-1], nil)
}

// TestIngestFailsAtBadInputAndResumesOnCorrectedInput: under --on-error
// fail, malformed input (exit 1) and a protocol violation (exit 3) stop
// ingest, naming file and line; exactly the messages before the bad line
// are committed; a rerun on the unchanged input fails the same way; and a
// rerun on the input corrected in place completes the same database, with
// the output an uninterrupted run on the corrected input would give.
func TestIngestFailsAtBadInputAndResumesOnCorrectedInput(t *testing.T) {
	dir := t.TempDir()
	good := errorStream(t, dir)
	want := cleanOf(t, dir, good)
	cases := []struct {
		name    string
		input   func(*testing.T, string, []byte) badInput
		code    int
		reasons []string
	}{
		{"malformed", malformedInput, exitFailure, []string{"malformed JSON"}},
		{"violation", violationInput, exitViolation, []string{"protocol violation (conflicting-diff)", "conflicts with"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			b := tc.input(t, d, good)
			in, db, out := filepath.Join(d, "in.jsonl"), filepath.Join(d, "state.db"), filepath.Join(d, "out.jsonl")
			os.WriteFile(in, b.bad, 0o644)
			args := []string{"ingest", "--db", db, "--out", out, in}
			at := fmt.Sprintf("%s:%d", in, b.line)
			expectFailure(t, tc.code, nil, args, append([]string{at}, tc.reasons...)...)
			before := cleanOf(t, d, prefixLines(b.bad, b.line))
			if got := readFile(t, out); !bytes.Equal(got, before) {
				t.Fatalf("committed output is not that of the %d lines before the bad one: %s", b.line-1, firstDifference(got, before))
			}
			if s := dbStatus(t, db); s.OutputFileBytes != int64(len(before)) {
				t.Fatalf("the database committed %d output bytes, want %d", s.OutputFileBytes, len(before))
			}
			// The same input fails the same way: the bad line is not
			// skipped by the committed input offset.
			expectFailure(t, tc.code, nil, args, append([]string{at}, tc.reasons...)...)
			// Corrected in place, the input completes the same database.
			os.WriteFile(in, b.good, 0o644)
			mustRunBin(t, nil, args...)
			if got := readFile(t, out); !bytes.Equal(got, want) {
				t.Fatalf("after the rerun on corrected input: %s", firstDifference(got, want))
			}
		})
	}
}

// TestIngestSkipsBadInputAndCountsIt: under --on-error skip, malformed
// input and a protocol violation are reported with their position,
// counted in the database, and the output is that of the input without
// the bad line: the state is as if it never arrived.
func TestIngestSkipsBadInputAndCountsIt(t *testing.T) {
	dir := t.TempDir()
	good := errorStream(t, dir)
	for _, tc := range []struct {
		name   string
		input  func(*testing.T, string, []byte) badInput
		reason string
	}{
		{"malformed", malformedInput, "malformed JSON"},
		{"violation", violationInput, "conflicting-diff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			b := tc.input(t, d, good)
			in, db, out := filepath.Join(d, "in.jsonl"), filepath.Join(d, "state.db"), filepath.Join(d, "out.jsonl")
			os.WriteFile(in, b.bad, 0o644)
			r := mustRunBin(t, nil, "ingest", "--on-error", "skip", "--db", db, "--out", out, in)
			at := fmt.Sprintf("%s:%d", in, b.line)
			if !strings.Contains(r.Stderr, at) || !strings.Contains(r.Stderr, tc.reason) {
				t.Errorf("stderr does not report %s (%s):\n%s", at, tc.reason, r.Stderr)
			}
			if got := logField(r.Stderr, "ingest finished", "skipped"); got != "1" {
				t.Errorf("ingest reports skipped=%q, want 1", got)
			}
			s := dbStatus(t, db)
			if s.Skipped != 1 || s.Quarantined != 0 {
				t.Errorf("database counts %d skipped, %d quarantined; want 1, 0", s.Skipped, s.Quarantined)
			}
			want := cleanOf(t, d, withoutLine(b.bad, b.line))
			if got := readFile(t, out); !bytes.Equal(got, want) {
				t.Fatalf("output is not that of the input without line %d: %s", b.line, firstDifference(got, want))
			}
		})
	}
}

// TestIngestQuarantinesBadInputDurably: under --on-error quarantine, the
// bad message is stored in the database with its raw bytes, position and
// reason, and the output is that of the input without it.
func TestIngestQuarantinesBadInputDurably(t *testing.T) {
	dir := t.TempDir()
	good := errorStream(t, dir)
	for _, tc := range []struct {
		name   string
		input  func(*testing.T, string, []byte) badInput
		reason string
		raw    func(badInput) []byte
	}{
		{"malformed", malformedInput, "malformed JSON", func(b badInput) []byte { return b.badLine }},
		{"violation", violationInput, "conflicting-diff", func(b badInput) []byte { return canonical(t, b.badLine) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			b := tc.input(t, d, good)
			in, db, out := filepath.Join(d, "in.jsonl"), filepath.Join(d, "state.db"), filepath.Join(d, "out.jsonl")
			os.WriteFile(in, b.bad, 0o644)
			r := mustRunBin(t, nil, "ingest", "--on-error", "quarantine", "--db", db, "--out", out, in)
			if got := logField(r.Stderr, "ingest finished", "quarantined"); got != "1" {
				t.Errorf("ingest reports quarantined=%q, want 1", got)
			}
			if s := dbStatus(t, db); s.Quarantined != 1 || s.Skipped != 0 {
				t.Errorf("database counts %d quarantined, %d skipped; want 1, 0", s.Quarantined, s.Skipped)
			}
			q := quarantined(t, db)
			if len(q) != 1 {
				t.Fatalf("%d quarantine records, want 1", len(q))
			}
			rec := q[0]
			if rec.Pos.Source != in || rec.Pos.Line != int64(b.line) || rec.Pos.Offset != int64(b.offset) {
				t.Errorf("quarantined at %s (byte %d), want %s:%d (byte %d)", rec.Pos, rec.Pos.Offset, in, b.line, b.offset)
			}
			if !bytes.Equal(rec.Raw, tc.raw(b)) || !strings.Contains(rec.Reason, tc.reason) || rec.Time.IsZero() {
				t.Errorf("quarantine record %+v (raw %q), want raw %q and a reason naming %q", rec, rec.Raw, tc.raw(b), tc.reason)
			}
			want := cleanOf(t, d, withoutLine(b.bad, b.line))
			if got := readFile(t, out); !bytes.Equal(got, want) {
				t.Fatalf("output is not that of the input without line %d: %s", b.line, firstDifference(got, want))
			}
		})
	}
}

// canonical returns the canonical JSON of one message line.
func canonical(t *testing.T, line []byte) []byte {
	var m cdc.Message
	if err := cdc.ParseJSON(line, &m); err != nil {
		t.Fatal(err)
	}
	return cdc.AppendJSON(nil, &m)
}

// TestDemangleHandlesBadInputByPolicy: cdclog demangle under fail stops
// with exit 1 (malformed) or 3 (violation) naming file and line; under
// skip it reports and goes on, with the output of the input without the
// bad line; under quarantine it also writes the bad message to the
// --quarantine file with its position, reason and raw bytes.
func TestDemangleHandlesBadInputByPolicy(t *testing.T) {
	dir := t.TempDir()
	good := errorStream(t, dir)
	for _, tc := range []struct {
		name   string
		input  func(*testing.T, string, []byte) badInput
		code   int
		reason string
		raw    func(badInput) []byte
	}{
		{"malformed", malformedInput, exitFailure, "malformed JSON", func(b badInput) []byte { return b.badLine }},
		{"violation", violationInput, exitViolation, "conflicting-diff", func(b badInput) []byte { return canonical(t, b.badLine) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			b := tc.input(t, d, good)
			in := filepath.Join(d, "in.jsonl")
			os.WriteFile(in, b.bad, 0o644)
			at := fmt.Sprintf("%s:%d", in, b.line)
			r := expectFailure(t, tc.code, nil, []string{"demangle", in}, at, tc.reason)
			if before := cleanOf(t, d, prefixLines(b.bad, b.line)); !bytes.HasPrefix([]byte(r.Stdout), before) {
				t.Errorf("demangle under fail did not write the output of the lines before the bad one")
			}
			want := cleanOf(t, d, withoutLine(b.bad, b.line))
			r = mustRunBin(t, nil, "demangle", "--on-error", "skip", in)
			if r.Stdout != string(want) || !strings.Contains(r.Stderr, at) {
				t.Errorf("skip: output equal to the input's without the bad line: %v; stderr names %s: %v",
					r.Stdout == string(want), at, strings.Contains(r.Stderr, at))
			}
			qf := filepath.Join(d, "quarantine.jsonl")
			r = mustRunBin(t, nil, "demangle", "--on-error", "quarantine", "--quarantine", qf, in)
			if r.Stdout != string(want) {
				t.Errorf("quarantine: output differs from the input's without the bad line")
			}
			var e struct {
				Source string
				Line   int
				Offset int
				Reason string
				Raw    string
			}
			q := readFile(t, qf)
			if err := json.Unmarshal(q, &e); err != nil || bytes.Count(q, []byte("\n")) != 1 {
				t.Fatalf("quarantine file %q: %v", q, err)
			}
			if e.Source != in || e.Line != b.line || e.Offset != b.offset || e.Raw != string(tc.raw(b)) || !strings.Contains(e.Reason, tc.reason) {
				t.Errorf("quarantine entry %+v, want %s:%d byte %d raw %q reason naming %q", e, in, b.line, b.offset, tc.raw(b), tc.reason)
			}
		})
	}
}

// TestIngestReportsEveryKindOfProtocolViolation: each violation of SPEC
// section 1 exits 3 under fail, naming the kind and the offending line;
// under skip and quarantine the message is set aside and counted, and the
// output is that of the input without it.
func TestIngestReportsEveryKindOfProtocolViolation(t *testing.T) {
	const (
		p0  = `{"progress":{"lower":0,"upper":1,"counts":[]}}`
		p1  = `{"progress":{"lower":1,"upper":2,"counts":[{"time":1,"count":1}]}}`
		p12 = `{"progress":{"lower":1,"upper":3,"counts":[{"time":1,"count":2}]}}`
		z2  = `{"progress":{"lower":2,"upper":3,"counts":[]}}`
		a1  = `{"update":{"data":"a","time":1,"diff":1}}`
		a1b = `{"update":{"data":"a","time":1,"diff":2}}`
		b1  = `{"update":{"data":"b","time":1,"diff":1}}`
		a2  = `{"update":{"data":"a","time":2,"diff":1}}`
	)
	for _, tc := range []struct {
		kind  string
		lines []string // the last one is the violation
	}{
		{"conflicting-diff", []string{p0, a1, a1b}},
		{"too-many-updates", []string{p1, a1, b1}},
		{"update-at-zero-count", []string{p0, z2, a2}}, // time 1 is pending: 2 is not emitted
		{"conflicting-counts", []string{p0, p1, p12}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			d := t.TempDir()
			in := filepath.Join(d, "in.jsonl")
			bad := []byte(strings.Join(tc.lines, "\n") + "\n")
			os.WriteFile(in, bad, 0o644)
			n := len(tc.lines)
			want := cleanOf(t, d, withoutLine(bad, n))
			at := fmt.Sprintf("%s:%d", in, n)
			expectFailure(t, exitViolation, nil, []string{"ingest", "--db", filepath.Join(d, "fail.db"), "--out", filepath.Join(d, "fail.jsonl"), in},
				at, "protocol violation ("+tc.kind+")")
			for _, policy := range []string{"skip", "quarantine"} {
				db, out := filepath.Join(d, policy+".db"), filepath.Join(d, policy+".jsonl")
				mustRunBin(t, nil, "ingest", "--on-error", policy, "--db", db, "--out", out, in)
				if got := readFile(t, out); !bytes.Equal(got, want) {
					t.Errorf("%s: output %q, want %q (the input without line %d)", policy, got, want, n)
				}
				s := dbStatus(t, db)
				if s.Skipped+s.Quarantined != 1 || s.Violations != 1 {
					t.Errorf("%s: %d skipped, %d quarantined, %d violations; want one", policy, s.Skipped, s.Quarantined, s.Violations)
				}
				if policy == "quarantine" {
					if q := quarantined(t, db); len(q) != 1 || q[0].Pos.Line != int64(n) || !strings.Contains(q[0].Reason, tc.kind) {
						t.Errorf("quarantine records %+v", q)
					}
				}
			}
		})
	}
}
