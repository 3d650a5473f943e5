package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// cleanLines returns a consolidated CDC stream over times [0, times) as
// JSON Lines: at time t the updates of keys 0 to t%4-1, then one progress
// statement for t. keep (nil keeps all) filters the messages: k is the
// update's key, or -1 for the progress statement.
func cleanLines(times int, keep func(t, k int) bool) []string {
	var lines []string
	for t := 0; t < times; t++ {
		n := t % 4
		for k := 0; k < n; k++ {
			if keep == nil || keep(t, k) {
				lines = append(lines, fmt.Sprintf(`{"update":{"data":{"key":%d,"v":"%d-%d"},"time":%d,"diff":%d}}`, k, t, k, t, 1+(t+k)%3))
			}
		}
		counts := ""
		if n > 0 {
			counts = fmt.Sprintf(`{"time":%d,"count":%d}`, t, n)
		}
		if keep == nil || keep(t, -1) {
			lines = append(lines, fmt.Sprintf(`{"progress":{"lower":%d,"upper":%d,"counts":[%s]}}`, t, t+1, counts))
		}
	}
	return lines
}

// mangledStream is cleanLines with every third message sent twice and the
// whole reordered within a window of 16, deterministically.
func mangledStream(t *testing.T, times int, keep func(t, k int) bool) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(times), 5))
	var out []string
	for i, l := range cleanLines(times, keep) {
		out = append(out, l)
		if i%3 == 0 {
			out = append(out, l)
		}
	}
	for i := range out {
		j := min(len(out)-1, i+rng.IntN(16))
		out[i], out[j] = out[j], out[i]
	}
	return strings.Join(out, "\n") + "\n"
}

// ingestDB ingests input (written to a file) into a new database with an
// exactly-once output file and returns the paths of both.
func ingestDB(t *testing.T, input string, extra ...string) (db, out string) {
	t.Helper()
	dir := t.TempDir()
	in := writeFile(t, dir, "in.jsonl", input)
	db, out = filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	args := append([]string{"--quiet", "ingest", "--db", db, "--out", out}, extra...)
	if code, _, stderr := runCLI(t, "", append(args, in)...); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	return db, out
}

// progressCommands are the long runs that may show progress, on db
// (which the first one creates) and the input file in.
func progressCommands(db, in string) [][]string {
	return [][]string{
		{"ingest", "--db", db, "--out", filepath.Join(filepath.Dir(db), "out.jsonl"), in},
		{"demangle", in},
		{"replay", "--db", db},
		{"replay", "--db", db, "--rederive"},
		{"replay", "--db", db, "--verify"},
		{"gc", "--db", db},
	}
}
