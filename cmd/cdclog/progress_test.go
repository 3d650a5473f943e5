package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProgressDrawsWhenEnabled(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressTo(&buf, progressOptions{label: "ingest", total: 1000, bytes: true})
	time.Sleep(progressInterval) // the display is throttled
	p.describe(func() string { return "frontier 7" })
	time.Sleep(progressInterval)
	p.add(400)
	p.finish()
	if out := buf.String(); !strings.Contains(out, "ingest frontier 7") || !strings.Contains(out, "400/1000 B") {
		t.Fatalf("no bar drawn: %q", out)
	}
}

func TestSpinnerCountsItemsWhenTheTotalIsUnknown(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressTo(&buf, progressOptions{label: "replay", unit: "record"})
	time.Sleep(progressInterval)
	p.add(42)
	// The display is throttled: on a loaded machine the first redraw may
	// come later. Adding nothing redraws once the interval has passed.
	for i := 0; i < 50 && !strings.Contains(buf.String(), "record/s"); i++ {
		time.Sleep(progressInterval)
		p.add(0)
	}
	p.finish()
	if out := buf.String(); !strings.Contains(out, "42") || !strings.Contains(out, "record/s") {
		t.Fatalf("spinner output: %q", out)
	}
}

func TestNilProgressDoesNothing(t *testing.T) {
	var p *progress
	p.add(1)
	p.shrink(1)
	p.describe(func() string { t.Fatal("description built for a nil progress"); return "" })
	p.clear()
	p.finish()
	var ip *inputProgress
	ip.startInput(10)
	ip.batch(20, 3, func() (uint64, bool) { t.Fatal("frontier asked for a nil progress"); return 0, false })
	ip.clear()
	ip.finish()
}

func TestInputSizeIsKnownOnlyForRegularFiles(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a", "12345")
	b := writeFile(t, dir, "b", "123")
	if n, ok := inputSize([]string{a, b}); !ok || n != 8 {
		t.Fatalf("two files: %d, %v", n, ok)
	}
	for _, names := range [][]string{nil, {"-"}, {a, "-"}, {a, filepath.Join(dir, "missing")}} {
		if _, ok := inputSize(names); ok {
			t.Fatalf("%q: size reported as known", names)
		}
	}
}

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
