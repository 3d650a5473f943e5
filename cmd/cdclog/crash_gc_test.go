package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
)

// TestIngestGoesOnAfterGCIsKilledWhileCompacting: gc compacts the
// database into a temporary file that it renames over the database. A
// gc killed at any point of that (here, once its temporary file holds a
// random share of the database's size, or at once) must leave a database
// that check accepts, and that ingest goes on with: after the stream
// arrives in three parts, with kills of gc between them, the output file
// is byte for byte the clean stream.
func TestIngestGoesOnAfterGCIsKilledWhileCompacting(t *testing.T) {
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 91))
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 23, Times: 30_000})
	want := inMemoryClean(t, in, cdc.JSONL)
	parts := splitLines(t, readFile(t, in), 3, filepath.Join(dir, "part"))
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")

	kills, runs := 0, 0
	for i := range parts {
		mustRunBin(t, nil, append([]string{"--quiet", "ingest", "--db", db, "--out", out}, parts[:i+1]...)...)
		if i == len(parts)-1 {
			break
		}
		for range 3 {
			runs++
			if killGC(t, db, rng) {
				kills++
			}
			if r := testbin.Run(t, nil, "--quiet", "check", "--db", db); r.Code != 0 {
				t.Fatalf("check after a gc was killed: %v", r)
			}
		}
	}
	if got := readFile(t, out); !bytes.Equal(got, want) {
		t.Fatalf("after %d kills of gc: %s", kills, firstDifference(got, want))
	}
	t.Logf("%d of %d gc runs killed while compacting", kills, runs)
}

// killGC runs gc on db and kills it once its temporary file holds a
// random share of the database's size (or at once, one time in four). It
// reports whether gc was killed; a gc that finished first must have
// succeeded.
func killGC(t *testing.T, db string, rng *rand.Rand) bool {
	t.Helper()
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	target := int64(-1) // at once
	if rng.IntN(4) > 0 {
		target = rng.Int64N(fi.Size())
	}
	earlier := replaceTemps(db, nil) // left by the gc runs killed before
	cmd, stdout, stderr := testbin.Command(t, nil, "--quiet", "gc", "--db", db)
	r, err := testbin.KillWhen(context.Background(), cmd, stdout, stderr, func(time.Duration) bool {
		if target < 0 {
			return true
		}
		for _, size := range replaceTemps(db, earlier) {
			if size >= target {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Signaled && r.Code != 0 {
		t.Fatalf("gc: %v", r)
	}
	return r.Signaled
}

// replaceTemps returns the sizes of gc's temporary files next to db, by
// name, leaving out those in skip.
func replaceTemps(db string, skip map[string]int64) map[string]int64 {
	entries, _ := os.ReadDir(filepath.Dir(db))
	sizes := map[string]int64{}
	for _, e := range entries {
		if _, ok := skip[e.Name()]; ok || !strings.HasPrefix(e.Name(), filepath.Base(db)+".cdclog-replace-") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			sizes[e.Name()] = fi.Size()
		}
	}
	return sizes
}
