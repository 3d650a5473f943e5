package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAQuarantineFileThatIsAnInputIsRefusedHoweverItIsReached: demangle,
// replay FILE and merge create their --quarantine file, which emptied the
// input when it was the same file by another name (a symbolic or hard
// link) or the file on stdin. Each is refused as a usage error, naming
// the clash, and the input keeps every byte.
func TestAQuarantineFileThatIsAnInputIsRefusedHoweverItIsReached(t *testing.T) {
	content := fourMessages
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	sym, hard, symIn := filepath.Join(dir, "sym.jsonl"), filepath.Join(dir, "hard.jsonl"), filepath.Join(dir, "sym-in.jsonl")
	if err := os.WriteFile(in, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(in, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(in, symIn); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		q     string   // the --quarantine FILE
		args  []string // the command's inputs
		stdin bool     // stdin reads in
		says  string
	}{
		{"the same path", in, []string{in}, false, "is also an input file (" + in + ")"},
		{"a symbolic link to the input", sym, []string{in}, false, "is also an input file"},
		{"the input through a symbolic link", in, []string{symIn}, false, "is also an input file"},
		{"a hard link to the input", hard, []string{in}, false, "is also an input file"},
		{"the file on stdin, as -", in, []string{"-"}, true, "is also the input (stdin reads it)"},
		{"the file on stdin, no FILE", in, nil, true, "is also the input (stdin reads it)"},
	}
	commands := [][]string{{"demangle"}, {"replay"}, {"merge"}}
	for _, cmd := range commands {
		for _, tc := range cases {
			if tc.args == nil && cmd[0] != "demangle" {
				continue // replay and merge need a FILE
			}
			t.Run(cmd[0]+"/"+tc.name, func(t *testing.T) {
				args := append(append([]string{}, cmd...), "--on-error", "quarantine", "--quarantine", tc.q)
				args = append(args, tc.args...)
				var stdin io.Reader // nil: no input
				if tc.stdin {
					f, err := os.Open(in)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					stdin = f
				}
				r := expectFailure(t, exitUsage, stdin, args, "--quarantine "+tc.q+" ", tc.says)
				if r.Stdout != "" {
					t.Errorf("wrote output before refusing: %q", r.Stdout)
				}
				if got := string(readFile(t, in)); got != content {
					t.Fatalf("the input was changed to %q", got)
				}
			})
		}
	}
}

// TestAQuarantineFileOnAnotherFileThanStdinIsWritten: the check compares
// files, not names: with stdin from one file and --quarantine another,
// demangle runs and quarantines into it.
func TestAQuarantineFileOnAnotherFileThanStdinIsWritten(t *testing.T) {
	dir := t.TempDir()
	in, q := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(in, []byte("not json\n"+fourMessages), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(q, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mustRunBin(t, f, "--quiet", "demangle", "--on-error", "quarantine", "--quarantine", q)
	got := string(readFile(t, q))
	if !strings.Contains(got, `"raw":"not json"`) || strings.Contains(got, "old") {
		t.Fatalf("quarantine file %q, want the one bad line", got)
	}
}

// TestRejectsAreSetAsideInInputOrder: undecodable lines and protocol
// violations in one batch are quarantined (and reported) in the order of
// the input, by demangle and by ingest alike.
func TestRejectsAreSetAsideInInputOrder(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "in.jsonl", strings.Join([]string{
		`{"update":{"data":1,"time":0,"diff":1}}`,
		`{"update":{"data":1,"time":0,"diff":2}}`,
		`garbage`,
		`{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":2}]}}`,
		`{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}`,
		`more garbage`,
	}, "\n")+"\n")
	want := []string{`"line":2,`, `"line":3,`, `"line":5,`, `"line":6,`}
	inOrder := func(what, lines string) {
		t.Helper()
		got := strings.Split(strings.TrimSpace(lines), "\n")
		if len(got) != len(want) {
			t.Fatalf("%s: %d lines, want %d:\n%s", what, len(got), len(want), lines)
		}
		for i, w := range want {
			if !strings.Contains(got[i], w) {
				t.Fatalf("%s: line %d is %s, want %s: input order", what, i+1, got[i], w)
			}
		}
	}
	q := filepath.Join(dir, "q.jsonl")
	mustRunBin(t, nil, "demangle", "-q", "--on-error", "quarantine", "--quarantine", q, in)
	b, err := os.ReadFile(q)
	if err != nil {
		t.Fatal(err)
	}
	inOrder("demangle --quarantine", string(b))
	db := filepath.Join(dir, "state.db")
	mustRunBin(t, nil, "ingest", "-q", "--db", db, "--out", filepath.Join(dir, "out.jsonl"), "--on-error", "quarantine", in)
	inOrder("ingest, inspect quarantine", mustRunBin(t, nil, "inspect", "--db", db, "quarantine", "--json").Stdout)
}
