package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
)

// TestIngestWithItsPendingStateOnDiskSurvivesKills is the crash test of
// TestIngestSurvivesKillAtRandomInstants for a database whose pending
// state is on disk: the stream's progress statements come last (as when
// the producer's progress is held back), so that every update is pending
// until the end, and ingest runs with pending-memory budgets far below
// what is pending, so that nearly all of it is on disk, in the WAL, and
// read back as the statements arrive. Kills land while updates pile up
// beyond the memory horizon, while statements release them, and while
// opening a database whose checkpoint has a horizon; the output file must
// still end byte-identical to an uninterrupted run's, which must be
// cdclog demangle's.
func TestIngestWithItsPendingStateOnDiskSurvivesKills(t *testing.T) {
	scale := crashScaleFor(t)
	seed := crashSeed(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeHeldBackStream(t, in, streamSpec{Seed: 9, Times: scale.times})
	want := inMemoryClean(t, in, cdc.JSONL)
	clean := filepath.Join(dir, "clean.jsonl")
	ref := mustRunBin(t, nil, "ingest", "--db", filepath.Join(dir, "ref.db"), "--out", clean, in)
	if !bytes.Equal(readFile(t, clean), want) {
		t.Fatal("an uninterrupted ingest differs from cdclog demangle")
	}
	variants := []crashVariant{
		{name: "64KiB", pendingMemory: 64 << 10, slowest: 2},
		{name: "4KiB", pendingMemory: 4 << 10, slowest: 3},
		{name: "4KiB-small-batches", pendingMemory: 4 << 10, flags: []string{"--batch-messages", "700"}, slowest: 4},
	}
	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			vdir := t.TempDir()
			k := &killer{
				t: t, rng: rand.New(rand.NewPCG(seed, uint64(100+i))), v: v, want: want,
				db: filepath.Join(vdir, "state.db"), out: filepath.Join(vdir, "out"),
				budget: time.Duration(float64(ref.Elapsed) * v.slowest),
			}
			k.args = append(append([]string{"--quiet", "ingest", "--db", k.db, "--out", k.out}, v.flags...), in)
			k.run(scale.kills)
			if s := dbStatus(t, k.db); s.AcceptedUpdates == 0 || s.PendingOnDisk != 0 {
				t.Fatalf("status after the last run: %+v", s)
			}
		})
	}
}

// writeHeldBackStream writes the mangled stream of s with every progress
// statement moved to the end, in the order they came.
func writeHeldBackStream(t *testing.T, path string, s streamSpec) {
	t.Helper()
	var updates, progress []byte
	for m := range s.messages() {
		b := &updates
		if m.Kind == cdc.KindProgress {
			b = &progress
		}
		var err error
		if *b, err = cdc.AppendMessage(*b, cdc.JSONL, &m); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, append(updates, progress...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIngestKeepsAHeldBackStreamsPendingStateOnDisk: ingesting only the
// updates of a stream (its progress held back) with a small pending-memory
// budget leaves a database whose pending state is on disk: a memory
// horizon, most updates beyond it, a few in memory; ingesting the
// statements after that releases the same clean stream as cdclog
// demangle of the whole input.
func TestIngestKeepsAHeldBackStreamsPendingStateOnDisk(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeHeldBackStream(t, in, streamSpec{Seed: 5, Times: 20_000})
	all := readFile(t, in)
	cut := bytes.Index(all, []byte(`{"progress"`))
	updates, progress := filepath.Join(dir, "updates.jsonl"), filepath.Join(dir, "progress.jsonl")
	os.WriteFile(updates, all[:cut], 0o644)
	os.WriteFile(progress, all[cut:], 0o644)
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	env := []string{"CDCLOG_PENDING_MEMORY=65536"}
	if r := runBinEnv(t, env, "ingest", "--db", db, "--out", out, updates); r.Code != 0 {
		t.Fatalf("%v", r)
	}
	s := dbStatus(t, db)
	if s.MemoryHorizon == nil || s.PendingOnDisk < 10*int64(s.PendingUpdates) || s.OutputRecords != 0 {
		t.Fatalf("after the updates alone: horizon %v, %d messages on disk, %d updates in memory, %d output records",
			s.MemoryHorizon, s.PendingOnDisk, s.PendingUpdates, s.OutputRecords)
	}
	if r := runBinEnv(t, env, "ingest", "--db", db, "--out", out, progress); r.Code != 0 {
		t.Fatalf("%v", r)
	}
	if got, want := readFile(t, out), inMemoryClean(t, in, cdc.JSONL); !bytes.Equal(got, want) {
		t.Fatalf("the output differs from demangle's: %s", firstDifference(got, want))
	}
	if s := dbStatus(t, db); s.MemoryHorizon != nil || s.PendingOnDisk != 0 {
		t.Fatalf("after the statements: horizon %v, %d messages on disk", s.MemoryHorizon, s.PendingOnDisk)
	}
}

// runBinEnv runs cdclog with args and env added to the environment.
func runBinEnv(t *testing.T, env []string, args ...string) testbin.Result {
	t.Helper()
	cmd, stdout, stderr := testbin.Command(t, nil, args...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	err := cmd.Run()
	return testbin.Finish(cmd, err, stdout, stderr, time.Since(start))
}
