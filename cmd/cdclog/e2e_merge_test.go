package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/internal/testbin"
)

// writeSortedShards deals n records of scripts/bench-merge's kind at
// random to k shard files in dir: each sorted, text order equal to key
// order, no two keys equal. It returns the files and every line, sorted.
func writeSortedShards(t *testing.T, dir string, k, n int, eol string) ([]string, []string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, uint64(k)))
	shards := make([]strings.Builder, k)
	var all []string
	sec := 1700000000
	for i := range n {
		if rng.IntN(100) == 0 {
			sec++
		}
		u := i % 977
		line := fmt.Sprintf(`{"meta":{"created_at":%d,"sequence_number":"100000000000%09d"},"eventID":"%08x","eventName":"MODIFY","dynamodb":{"Keys":{"id":{"S":"user-%d"}},"NewImage":{"id":{"S":"user-%d"},"n":{"N":"%d"}}}}`,
			sec, i, i, u, u, i%10007)
		all = append(all, line)
		shards[rng.IntN(k)].WriteString(line + eol)
	}
	files := make([]string, k)
	for i := range shards {
		files[i] = filepath.Join(dir, fmt.Sprintf("shard-%02d.jsonl", i))
		if err := os.WriteFile(files[i], []byte(shards[i].String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(all)
	return files, all
}

// TestMergeBinaryWritesTheShardsInTextOrder runs the built binary over 2
// and 16 sorted shards (as scripts/bench-merge builds them, LF and CRLF):
// the output is every line once, unchanged, in the order sort -m would
// write them under LC_ALL=C.
func TestMergeBinaryWritesTheShardsInTextOrder(t *testing.T) {
	for _, k := range []int{2, 16} {
		for _, eol := range []string{"\n", "\r\n"} {
			files, all := writeSortedShards(t, t.TempDir(), k, 30000, eol)
			r := testbin.Run(t, nil, append([]string{"merge"}, files...)...)
			if r.Code != 0 {
				t.Fatalf("%d shards: %s", k, r)
			}
			if want := strings.Join(all, "\n") + "\n"; r.Stdout != want {
				t.Fatalf("%d shards, line end %q: output (%d bytes) is not the %d lines in text order (%d bytes)",
					k, eol, len(r.Stdout), len(all), len(want))
			}
			if !strings.Contains(r.Stderr, fmt.Sprintf("shards=%d records=30000", k)) {
				t.Errorf("summary missing:\n%s", r.Stderr)
			}
		}
	}
}

// TestMergeBinaryStopsAtABadLine: through the binary, a bad line deep in a
// shard (past the chunks read ahead) stops the merge with exit 1 naming it;
// what was written is the records before it in order, nothing after.
func TestMergeBinaryStopsAtABadLine(t *testing.T) {
	dir := t.TempDir()
	files, all := writeSortedShards(t, dir, 2, 40000, "\n")
	data, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	bad := 15000
	broken := lines[bad]
	lines[bad] = strings.Replace(broken, `"sequence_number":"`, `"sequence_number":"x`, 1)
	if err := os.WriteFile(files[1], []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	r := testbin.Run(t, nil, "merge", files[0], files[1])
	want := fmt.Sprintf("%s:%d: meta.sequence_number", files[1], bad+1)
	if r.Code != 1 || !strings.Contains(r.Stderr, want) {
		t.Fatalf("want exit 1 naming %s: %s", want, r)
	}
	// Written: the bad line is met when its predecessor has been written
	// and its shard must give the next record. By then every record up to
	// that predecessor is out, and no later one can be.
	last := strings.TrimSuffix(lines[bad-1], "\n")
	i, found := slices.BinarySearch(all, last)
	if want := strings.Join(all[:i+1], "\n") + "\n"; !found || r.Stdout != want {
		t.Fatalf("output of %d bytes; want the %d records up to the bad line's predecessor (%d bytes)", len(r.Stdout), i+1, len(want))
	}
}
