package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runWithStderrFile runs a command line with stderr an *os.File that is
// not a terminal (the case of a pipe or a redirect) and returns what was
// written to it.
func runWithStderrFile(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stdout bytes.Buffer
	code := run(append([]string{"cdclog"}, args...), strings.NewReader(stdin), &stdout, f)
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(b)
}

func TestNothingIsDrawnWhenStderrIsNotATerminal(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "in.jsonl", mangledStream(t, 3000, nil))
	db := filepath.Join(dir, "state.db")
	for _, args := range progressCommands(db, in) {
		code, stderr := runWithStderrFile(t, "", args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		if strings.ContainsAny(stderr, "\r\x1b") || strings.Contains(stderr, "█") {
			t.Fatalf("%q drew progress on a non-terminal stderr: %q", args, stderr)
		}
	}
}
