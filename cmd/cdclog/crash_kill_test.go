package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/testbin"
	"github.com/cdclog/cdclog/recovery"
	bolt "go.etcd.io/bbolt"
)

// The crash tests kill `cdclog ingest` with SIGKILL at random instants and
// rerun it until a run completes; the output file must then be
// byte-identical to that of an uninterrupted run.
//
// How hard they push depends on the mode:
//
//	go test -short ./...            4 kills per variant, ~200k messages
//	go test ./...                   20 kills per variant, ~400k messages (CI)
//	CDCLOG_SOAK=N go test ./...     N kills per variant (scripts/soak)
//
// CDCLOG_CRASH_SEED=S replays the kill schedule of seed S (the timing of
// the child still varies from run to run).

// crashScale is the size of a crash test run.
type crashScale struct {
	times uint64 // times of the generated stream (about 4.5 messages each)
	kills int    // kills per variant
}

func crashScaleFor(t *testing.T) crashScale {
	if v := os.Getenv("CDCLOG_SOAK"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("CDCLOG_SOAK=%q: want a number of kills per variant", v)
		}
		return crashScale{times: 90_000, kills: n}
	}
	if testing.Short() {
		return crashScale{times: 45_000, kills: 4}
	}
	return crashScale{times: 90_000, kills: 20}
}

// crashSeed returns the seed of the kill schedule, logged for replay.
func crashSeed(t *testing.T) uint64 { return testbin.CrashSeed(t) }

// crashVariant is one way of running ingest under kills.
type crashVariant struct {
	name    string
	global  []string // global flags, before the command
	flags   []string // ingest flags besides --db and --out
	format  cdc.Format
	split   int  // split the input into this many files (0: one file)
	stdin   bool // feed the input through a pipe, from the start each run
	slowest float64
	// pendingMemory, when set, is the child's pending-state budget
	// (CDCLOG_PENDING_MEMORY), and that of the reopens in between.
	pendingMemory int64
}

// TestIngestSurvivesKillAtRandomInstants kills ingest at random instants,
// from process start to after the last commit, and checks after every kill
// that the output file is a prefix of the clean stream, that the database
// opens and never claims more output than the file holds, and that the
// next open cuts the file back to what was committed; and at the end that
// the file is byte-identical to an uninterrupted run's, as is the stored
// output log.
func TestIngestSurvivesKillAtRandomInstants(t *testing.T) {
	scale := crashScaleFor(t)
	seed := crashSeed(t)
	dir := t.TempDir()
	spec := streamSpec{Seed: 7, Times: scale.times}
	in := filepath.Join(dir, "in.jsonl")
	n := writeTestStream(t, in, cdc.JSONL, spec)
	inMP := filepath.Join(dir, "in.mp")
	writeTestStream(t, inMP, cdc.Msgpack, spec)

	// The reference: one uninterrupted run, which must agree with the
	// in-memory receiver.
	clean := filepath.Join(dir, "clean.jsonl")
	ref := mustRunBin(t, nil, "ingest", "--db", filepath.Join(dir, "ref.db"), "--out", clean, in)
	want := readFile(t, clean)
	if !bytes.Equal(want, inMemoryClean(t, in, cdc.JSONL)) {
		t.Fatal("an uninterrupted ingest differs from cdclog demangle")
	}
	t.Logf("%d messages, %d bytes of clean output; uninterrupted ingest %v", n, len(want), ref.Elapsed.Round(time.Millisecond))

	variants := []crashVariant{
		{name: "file", slowest: 1},
		{name: "stdin", stdin: true, slowest: 1},
		{name: "msgpack", global: []string{"--format", "msgpack"}, format: cdc.Msgpack, slowest: 1},
		{name: "small-batches", flags: []string{"--batch-messages", "500"}, slowest: 3},
		{name: "several-files", split: 3, slowest: 1},
	}
	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			vdir := t.TempDir()
			input := in
			if v.format == cdc.Msgpack {
				input = inMP
			}
			wantV := want
			if v.format == cdc.Msgpack {
				// Output is msgpack too: the reference is the msgpack
				// encoding of the clean stream.
				wantV = reencode(t, want, cdc.JSONL, cdc.Msgpack)
			}
			k := &killer{
				t: t, rng: rand.New(rand.NewPCG(seed, uint64(i))), v: v, want: wantV,
				db: filepath.Join(vdir, "state.db"), out: filepath.Join(vdir, "out"),
				budget: time.Duration(float64(ref.Elapsed) * v.slowest),
			}
			k.args = append(append(append([]string{"--quiet"}, v.global...), "ingest", "--db", k.db, "--out", k.out), v.flags...)
			switch {
			case v.stdin:
				k.stdin = input
			case v.split > 0:
				k.args = append(k.args, splitLines(t, readFile(t, input), v.split, filepath.Join(vdir, "in"))...)
			default:
				k.args = append(k.args, input)
			}
			k.run(scale.kills)
		})
	}
}

// killer runs one variant of the crash test.
type killer struct {
	t      *testing.T
	rng    *rand.Rand
	v      crashVariant
	args   []string
	stdin  string // input fed through a pipe; "" for file arguments
	db     string
	out    string
	want   []byte
	budget time.Duration // about how long an uninterrupted run takes

	kills, reopens int
	how            []string
}

// run kills ingest kills times in all, in rounds: each round starts on a
// fresh database and output file, kills runs until one completes (a kill
// may come too late), and checks the result. Rounds go on until the kills
// are done.
func (k *killer) run(kills int) {
	for round := 1; k.kills < kills || round == 1; round++ {
		if round > kills+3 {
			k.t.Fatalf("%d rounds for %d kills: the runs complete before the kills", round, kills)
		}
		k.round(round, kills)
	}
	k.t.Logf("%d kills (%s), %d reopens in between", k.kills, strings.Join(k.how, ", "), k.reopens)
}

// round runs ingest on a fresh database until a run completes.
func (k *killer) round(round, kills int) {
	t := k.t
	for _, f := range []string{k.db, k.out} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	for attempt := 0; ; attempt++ {
		if attempt > kills+20 {
			t.Fatalf("round %d: no run completed after %d attempts", round, attempt)
		}
		trigger, how := k.trigger(k.kills >= kills)
		r := k.start(trigger)
		if !r.Signaled {
			if r.Code != 0 {
				t.Fatalf("round %d, attempt %d (%s): %v", round, attempt, how, r)
			}
			noPanic(t, r)
			if attempt == 0 {
				k.budget = r.Elapsed // an uninterrupted run of this variant
			}
			break
		}
		k.kills++
		k.how = append(k.how, how)
		k.afterKill(attempt, how)
	}
	got := readFile(t, k.out)
	if !bytes.Equal(got, k.want) {
		t.Fatalf("round %d: after kills %s the output differs from an uninterrupted run: %s",
			round, strings.Join(k.how, ", "), firstDifference(got, k.want))
	}
	if stored := storedOutput(t, k.db, k.v.format); !bytes.Equal(stored, k.want) {
		t.Fatalf("round %d: the stored output log differs from an uninterrupted run: %s", round, firstDifference(stored, k.want))
	}
}

// trigger picks when to kill the next run; final runs are not killed.
func (k *killer) trigger(final bool) (func(time.Duration) bool, string) {
	if final {
		return func(time.Duration) bool { return false }, "no kill"
	}
	size := int64(len(k.want))
	done := float64(sizeOrMinusOne(k.out)) / float64(max(size, 1))
	remaining := k.budget
	if k.stdin == "" {
		remaining = time.Duration(float64(k.budget) * max(0.05, 1-done))
	}
	switch x := k.rng.Float64(); {
	case x < 0.15: // while starting: opening, recovering, cutting the output
		d := time.Duration(k.rng.Int64N(int64(8 * time.Millisecond)))
		return func(e time.Duration) bool { return e >= d }, fmt.Sprintf("at %v", d.Round(100*time.Microsecond))
	case x < 0.5: // anywhere in the run
		d := time.Duration(k.rng.Int64N(int64(remaining)) + 1)
		return func(e time.Duration) bool { return e >= d }, fmt.Sprintf("at %v", d.Round(time.Millisecond))
	case x < 0.85: // once the output has reached a random size
		cur := max(sizeOrMinusOne(k.out), 0)
		target := cur + k.rng.Int64N(max(size-cur, 1))
		return func(time.Duration) bool { return sizeOrMinusOne(k.out) >= target }, fmt.Sprintf("at output byte %d", target)
	default: // near the end: the last batches, the last commit, closing
		target := size - k.rng.Int64N(max(size/50, 1))
		return func(time.Duration) bool { return sizeOrMinusOne(k.out) >= target }, fmt.Sprintf("near the end (output byte %d of %d)", target, size)
	}
}

// start runs ingest until it exits or trigger fires.
func (k *killer) start(trigger func(time.Duration) bool) testbin.Result {
	t := k.t
	var stdin io.Reader
	if k.stdin != "" {
		f, err := os.Open(k.stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		stdin = struct{ io.Reader }{f} // a pipe, as from cat, not the file itself
	}
	cmd, stdout, stderr := testbin.Command(t, stdin, k.args...)
	if k.v.pendingMemory > 0 {
		cmd.Env = append(os.Environ(), fmt.Sprintf("CDCLOG_PENDING_MEMORY=%d", k.v.pendingMemory))
	}
	ctx, cancel := context.WithTimeout(context.Background(), testbin.DefaultTimeout)
	defer cancel()
	r, err := testbin.KillWhen(ctx, cmd, stdout, stderr, trigger)
	if err != nil {
		t.Fatalf("cdclog %s: %v", strings.Join(k.args, " "), err)
	}
	return r
}

// afterKill checks the state a kill left: the output file is a prefix of
// the clean stream and at least as long as what the database committed;
// every other time, an open (as the next run does first) cuts it back to
// exactly the committed size.
func (k *killer) afterKill(attempt int, how string) {
	t := k.t
	got := readFile(t, k.out)
	if !bytes.HasPrefix(k.want, got) {
		t.Fatalf("after kill %d (%s): the output file is not a prefix of the clean stream: %s",
			k.kills, how, firstDifference(got, k.want))
	}
	committed, ok := k.committedOutput()
	if !ok {
		return
	}
	if committed > int64(len(got)) {
		t.Fatalf("after kill %d (%s): the database committed %d output bytes, the file has %d", k.kills, how, committed, len(got))
	}
	if attempt%2 == 1 {
		return
	}
	k.reopens++
	sink, err := recovery.OpenFileSink(abs(t, k.out), recovery.FileSinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := recovery.Open(k.db, recovery.Options{Sink: sink, SinkName: abs(t, k.out), SinkFormat: k.v.format, Logger: quietLogger(),
		PendingMemory: k.v.pendingMemory})
	if err != nil {
		t.Fatalf("after kill %d (%s): reopen: %v", k.kills, how, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	got = readFile(t, k.out)
	s := dbStatus(t, k.db)
	if int64(len(got)) != s.OutputFileBytes || !bytes.HasPrefix(k.want, got) {
		t.Fatalf("after kill %d (%s) and a reopen: the file has %d bytes, %d committed (before the reopen %d), prefix of the clean stream: %v",
			k.kills, how, len(got), s.OutputFileBytes, committed, bytes.HasPrefix(k.want, got))
	}
}

// committedOutput returns the output file size the database committed;
// ok is false when the kill came before the database was initialised.
func (k *killer) committedOutput() (int64, bool) {
	t := k.t
	size := sizeOrMinusOne(k.db)
	if size <= 0 {
		return 0, false // killed before bbolt wrote its first pages
	}
	r, err := recovery.OpenReader(k.db, 0)
	if errors.Is(err, recovery.ErrForeign) && emptyBolt(t, k.db) {
		// Killed after bbolt initialised the file but before cdclog
		// created its buckets: the next run adopts the empty file.
		return 0, false
	}
	if err != nil {
		t.Fatalf("after kill %d: the database does not open: %v", k.kills, err)
	}
	defer r.Close()
	s, err := r.Status()
	if err != nil {
		t.Fatalf("after kill %d: status: %v", k.kills, err)
	}
	if s.OutputFile != "" && s.OutputFile != abs(t, k.out) {
		t.Fatalf("after kill %d: the database's output file is %q", k.kills, s.OutputFile)
	}
	return s.OutputFileBytes, true
}

// emptyBolt reports whether path is a bbolt database without buckets.
func emptyBolt(t testing.TB, path string) bool {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return false
	}
	defer db.Close()
	empty := true
	db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
	})
	return empty
}

// sizeOrMinusOne returns the size of the file, or -1 when it does not exist.
func sizeOrMinusOne(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// firstDifference describes where got first differs from want.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	line := bytes.Count(want[:i], []byte("\n")) + 1
	ctx := func(b []byte) string {
		return fmt.Sprintf("%q", b[i:min(len(b), i+60)])
	}
	return fmt.Sprintf("%d bytes, want %d; first difference at byte %d (line %d): %s, want %s",
		len(got), len(want), i, line, ctx(got), ctx(want))
}

// reencode decodes a stream in format from and encodes it in format to.
func reencode(t testing.TB, b []byte, from, to cdc.Format) []byte {
	t.Helper()
	r := cdc.NewReader(bytes.NewReader(b), from, "reencode")
	var out []byte
	var m cdc.Message
	for {
		err := r.Next(&m)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if out, err = cdc.AppendMessage(out, to, &m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIngestSurvivesKillWhileCatchingUpALateOutputFile: an output file
// attached to a database that already holds output (a first run wrote to
// stdout) first receives every committed record (the catch-up); a kill
// during the catch-up leaves a file that the next open cuts back, and the
// run that completes leaves the clean stream, byte for byte.
func TestIngestSurvivesKillWhileCatchingUpALateOutputFile(t *testing.T) {
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 77))
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 17, Times: 30_000})
	want := inMemoryClean(t, in, cdc.JSONL)
	db, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	if r := mustRunBin(t, nil, "ingest", "--db", db, in); r.Stdout != string(want) {
		t.Fatal("the run without --out did not write the clean stream to stdout")
	}
	kills := 0
	for attempt := 0; attempt < 20; attempt++ {
		target := int64(-1) // no kill
		if attempt < 5 {
			target = rng.Int64N(int64(len(want)))
		}
		cmd, stdout, stderr := testbin.Command(t, nil, "ingest", "--db", db, "--out", out, in)
		r, err := testbin.KillWhen(context.Background(), cmd, stdout, stderr,
			func(time.Duration) bool { return target >= 0 && sizeOrMinusOne(out) >= target })
		if err != nil {
			t.Fatal(err)
		}
		if !r.Signaled {
			if r.Code != 0 {
				t.Fatalf("%v", r)
			}
			break
		}
		kills++
		if got := readFile(t, out); !bytes.HasPrefix(want, got) {
			t.Fatalf("after kill %d (at output byte %d): not a prefix of the clean stream: %s", kills, target, firstDifference(got, want))
		}
	}
	if got := readFile(t, out); !bytes.Equal(got, want) {
		t.Fatalf("after %d kills during the catch-up: %s", kills, firstDifference(got, want))
	}
	t.Logf("%d kills during the catch-up", kills)
}
