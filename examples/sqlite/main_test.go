package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/internal/streamgen"
	"github.com/cdclog/cdclog/internal/testbin"
)

// The example under kill -9: the test runs the built program on a mangled
// stream, kills it with SIGKILL at random instants (while it opens, while
// it ingests and applies, near the end), and after every kill checks the
// SQLite database as the next run will find it: its position is 0 or the
// end of a step, its table is exactly the collection after the clean
// stream's records up to that position, and its update count is theirs.
// The run that is not killed must leave the table equal to applying the
// whole demangled stream once.
//
//	go test ./sqlite                   10 kills
//	go test -short ./sqlite            4 kills
//	CDCLOG_SOAK=N go test ./sqlite     N kills
//	CDCLOG_CRASH_SEED=S                replays the kill schedule of seed S

var binary string // the built example

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cdclog-sqlite-example-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "sqlite")
	build := exec.Command(goTool(), "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the example:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goTool finds the go command: go test puts $GOROOT/bin first in PATH.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// stream writes a mangled stream to path and returns its clean stream, as
// the in-memory receiver releases it.
func stream(t *testing.T, path string, times uint64) []cdc.Message {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	recv := demangle.New(0)
	var clean []cdc.Message
	var buf []byte
	mangled := streamgen.Mangle(streamgen.Gen(streamgen.GenOptions{Seed: 3, Times: times, Final: true}),
		streamgen.MangleOptions{Seed: 4, MaxDelay: 200, MaxCopies: 3})
	for m := range mangled {
		buf = append(cdc.AppendJSON(buf[:0], &m), '\n')
		if _, err := w.Write(buf); err != nil {
			t.Fatal(err)
		}
		if clean, _, err = recv.Push(clean, &m, cdc.Pos{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range clean { // the receiver's data aliases its buffers
		clean[i].Update.Data = bytes.Clone(clean[i].Update.Data)
	}
	return clean
}

// collection is the table's expected contents after a prefix of the clean
// stream: each data value's count (none zero), and the updates applied.
type collection struct {
	counts  map[string]int64
	updates uint64
}

// after returns the collection after the first n clean records.
func after(clean []cdc.Message, n uint64) collection {
	c := collection{counts: map[string]int64{}}
	for _, m := range clean[:n] {
		if m.Kind != cdc.KindUpdate {
			continue
		}
		d := string(m.Update.Data)
		if c.counts[d] += m.Update.Diff; c.counts[d] == 0 {
			delete(c.counts, d)
		}
		c.updates++
	}
	return c
}

// stored reads the SQLite database as a restart finds it.
func stored(t *testing.T, path string) (position, collection) {
	t.Helper()
	db, err := openSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pos, err := readPosition(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	c := collection{counts: map[string]int64{}, updates: pos.Updates}
	rows, err := db.Query(`SELECT data, count FROM collection`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		var n int64
		if err := rows.Scan(&d, &n); err != nil {
			t.Fatal(err)
		}
		c.counts[d] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return pos, c
}

// checkExact fails unless the SQLite database holds exactly the clean
// stream's first pos.Seq records, applied once, ending at a step's end.
func checkExact(t *testing.T, path string, clean []cdc.Message, when string) position {
	t.Helper()
	pos, got := stored(t, path)
	if pos.Seq > uint64(len(clean)) {
		t.Fatalf("%s: position %d past the clean stream's %d records", when, pos.Seq, len(clean))
	}
	if pos.Seq > 0 && clean[pos.Seq-1].Kind != cdc.KindProgress {
		t.Fatalf("%s: position %d is not the end of a step", when, pos.Seq)
	}
	want := after(clean, pos.Seq)
	if got.updates != want.updates || !maps.Equal(got.counts, want.counts) {
		t.Fatalf("%s: at record %d the table has %d rows and %d updates applied, want %d rows and %d updates (equal: %v)",
			when, pos.Seq, len(got.counts), got.updates, len(want.counts), want.updates, maps.Equal(got.counts, want.counts))
	}
	return pos
}

func killsFor(t *testing.T) int {
	if v := os.Getenv("CDCLOG_SOAK"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("CDCLOG_SOAK=%q: want a number of kills", v)
		}
		return n
	}
	if testing.Short() {
		return 4
	}
	return 10
}

// TestTheTableIsExactAfterKillsAtRandomInstants is the example's claim:
// exactly once into SQLite across kill -9.
func TestTheTableIsExactAfterKillsAtRandomInstants(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	clean := stream(t, in, 20_000)
	args := func(sub string) []string {
		return []string{"-db", filepath.Join(dir, sub+".db"), "-sqlite", filepath.Join(dir, sub+".sqlite"),
			"-in", in, "-commit-records", "300"}
	}
	// An uninterrupted run, for the time a run takes.
	start := time.Now()
	if out, err := exec.Command(binary, args("ref")...).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v: %s", err, out)
	}
	budget := time.Since(start)
	checkExact(t, filepath.Join(dir, "ref.sqlite"), clean, "the uninterrupted run")

	kills := killsFor(t)
	rng := rand.New(rand.NewPCG(testbin.CrashSeed(t), 1))
	k := &killer{t: t, rng: rng, clean: clean, budget: budget, args: args("run"),
		db: filepath.Join(dir, "run.db"), sqlite: filepath.Join(dir, "run.sqlite")}
	for round := 1; k.killed < kills || round == 1; round++ {
		if round > kills+3 {
			t.Fatalf("%d rounds for %d kills: the runs complete before the kills", round, kills)
		}
		k.round(kills)
	}
	t.Logf("%d records, %d updates; killed at records %v; an uninterrupted run takes %v",
		len(clean), after(clean, uint64(len(clean))).updates, k.positions, budget.Round(time.Millisecond))
}

// killer runs the example under kills.
type killer struct {
	t          *testing.T
	rng        *rand.Rand
	clean      []cdc.Message
	budget     time.Duration // how long an uninterrupted run takes
	args       []string
	db, sqlite string
	killed     int
	positions  []uint64 // the SQLite position after each kill
}

// round runs the example on fresh databases, killing runs at random
// instants until a run completes, and checks the table after every kill
// and at the end.
func (k *killer) round(kills int) {
	t := k.t
	for _, f := range []string{k.db, k.sqlite, k.sqlite + "-wal", k.sqlite + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	for attempt := 0; ; attempt++ {
		if attempt > kills+20 {
			t.Fatalf("no run completed after %d attempts", attempt)
		}
		var at time.Duration // 0: no kill
		if k.killed < kills {
			if k.rng.IntN(5) == 0 { // while opening and recovering
				at = time.Duration(k.rng.Int64N(int64(20*time.Millisecond))) + time.Millisecond
			} else {
				at = time.Duration(k.rng.Int64N(int64(k.budget))) + time.Millisecond
			}
		}
		cmd := exec.Command(binary, k.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		r, err := testbin.KillWhen(context.Background(), cmd, &stdout, &stderr,
			func(e time.Duration) bool { return at > 0 && e >= at })
		if err != nil {
			t.Fatal(err)
		}
		if !r.Signaled {
			if r.Code != 0 {
				t.Fatalf("attempt %d: exit %d: %s", attempt, r.Code, r.Stderr)
			}
			break
		}
		k.killed++
		pos := checkExact(t, k.sqlite, k.clean, fmt.Sprintf("after kill %d at %v", k.killed, at.Round(time.Millisecond)))
		k.positions = append(k.positions, pos.Seq)
	}
	pos := checkExact(t, k.sqlite, k.clean, "after the last run")
	if pos.Seq != uint64(len(k.clean)) || !pos.Complete {
		t.Fatalf("the last run ended at record %d of %d (complete %v)", pos.Seq, len(k.clean), pos.Complete)
	}
}

// TestATableAheadOfTheCdclogDatabaseIsRefused: a table whose position is
// past what the cdclog database ever committed was made from another
// stream; the example says so instead of reporting success over it.
func TestATableAheadOfTheCdclogDatabaseIsRefused(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.jsonl")
	stream(t, full, 2_000)
	lines, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, "half.jsonl")
	if err := os.WriteFile(half, lines[:bytes.LastIndexByte(lines[:len(lines)/2], '\n')+1], 0o644); err != nil {
		t.Fatal(err)
	}
	db, view := filepath.Join(dir, "state.db"), filepath.Join(dir, "view.sqlite")
	if out, err := exec.Command(binary, "-db", db, "-sqlite", view, "-in", full).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v: %s", err, out)
	}
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "-db", db, "-sqlite", view, "-in", half).CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("not of the same stream")) {
		t.Fatalf("a new cdclog database under the old table: %v: %s; want it refused", err, out)
	}
}
