package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// TestIngestSurvivesKillsDuringTheReleaseOfABigTime is the crash test of
// TestIngestSurvivesKillAtRandomInstants for a time of tens of thousands
// of updates, released in parts: with batches of 500 messages a batch's
// output is bounded at 1,000 records, so the time goes out over dozens of
// commits, each checkpoint saying how far its release got, and kills land
// in the middle of it (and while reopening a database part-way through
// it, which goes on with the release). The output file must end
// byte-identical to an uninterrupted run's, which must be cdclog
// demangle's.
func TestIngestSurvivesKillsDuringTheReleaseOfABigTime(t *testing.T) {
	scale := crashScaleFor(t)
	seed := crashSeed(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	n := 40_000
	if testing.Short() {
		n = 20_000
	}
	writeBigTimeStream(t, in, n)
	want := inMemoryClean(t, in, cdc.JSONL)
	clean := filepath.Join(dir, "clean.jsonl")
	flags := []string{"--batch-messages", "500"}
	ref := mustRunBin(t, nil, append(append([]string{"ingest", "--db", filepath.Join(dir, "ref.db"), "--out", clean}, flags...), in)...)
	if !bytes.Equal(readFile(t, clean), want) {
		t.Fatal("an uninterrupted ingest differs from cdclog demangle")
	}
	v := crashVariant{name: "big-time", flags: flags, slowest: 2}
	k := &killer{
		t: t, rng: rand.New(rand.NewPCG(seed, 300)), v: v, want: want,
		db: filepath.Join(dir, "state.db"), out: filepath.Join(dir, "out"),
		budget: time.Duration(float64(ref.Elapsed) * v.slowest),
	}
	k.args = append(append([]string{"--quiet", "ingest", "--db", k.db, "--out", k.out}, v.flags...), in)
	k.run(scale.kills)
}

// writeBigTimeStream writes a stream of three times: 0 with a few
// updates, 1 with n (a third of them twice, shuffled, its statement in
// the middle), 2 with a few more.
func writeBigTimeStream(t *testing.T, path string, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	var b bytes.Buffer
	b.WriteString(`{"update":{"data":{"k":"a"},"time":0,"diff":1}}` + "\n")
	b.WriteString(`{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}` + "\n")
	var lines []string
	for k := range n {
		line := fmt.Sprintf(`{"update":{"data":{"id":%d,"name":"row-%d"},"time":1,"diff":%d}}`+"\n", k, k%97, 1+k%3)
		lines = append(lines, line)
		if rng.IntN(3) == 0 {
			lines = append(lines, line)
		}
	}
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	mid := len(lines) / 2
	for _, l := range lines[:mid] {
		b.WriteString(l)
	}
	fmt.Fprintf(&b, `{"progress":{"lower":1,"upper":2,"counts":[{"time":1,"count":%d}]}}`+"\n", n)
	for _, l := range lines[mid:] {
		b.WriteString(l)
	}
	b.WriteString(`{"update":{"data":{"k":"b"},"time":2,"diff":-1}}` + "\n")
	b.WriteString(`{"progress":{"lower":2,"upper":3,"counts":[{"time":2,"count":1}]}}` + "\n")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
