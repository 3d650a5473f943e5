package recovery

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

// The simulation test, in the manner of bbolt's simulation_test.go and
// pebble's crash tests: the durable processor, in-process and through its
// public API only (Open, Submit, Append, Output, Close), runs random
// operations against a model (the in-memory receiver fed what was
// acknowledged) while its output file fails and loses power:
//
//   - requests of random sizes, several in flight at once, in batches of
//     a random size, from a mangled stream with protocol violations mixed
//     in (policy Fail: the call stops at the violation, the producer skips
//     the message and sends the rest again);
//   - in most runs a pending-state budget of a few hundred or thousand
//     bytes, so that the receiver keeps most of what is pending on disk
//     and loads it back (a violation by a message accepted beyond its
//     horizon is then reported later, Deferred: the producer sends again
//     what follows the message that made it load, and the model, which
//     refused the message when it came, must have refused that one);
//   - a sink fault (a short write, a sync that does not happen, a sync
//     that happens but fails), which fails the batch's commit, since the
//     transaction waits for the output file; bbolt's own commit cannot be
//     failed through the public API, so this is how commit errors come;
//   - a power cut: the output file keeps its synced bytes and a random
//     part of the others (simSink.crash), then the database is reopened;
//   - a clean close and reopen.
//
// After every reopen the output file and the stored output must be
// exactly the model's output, and the frontier the model's: nothing
// acknowledged is lost, nothing unacknowledged is half there. A producer
// sends again whatever was not acknowledged, as the package documentation
// says it may.
//
// The default run takes a few seconds; -sim.runs N runs more seeds, and
// -sim.seed S replays one (a failure prints its seed and its last steps).
var (
	simRuns = flag.Int("sim.runs", 30, "runs of TestSimulatedFaultsLoseNothingAcknowledged")
	simSeed = flag.Uint64("sim.seed", 0, "replay this seed of TestSimulatedFaultsLoseNothingAcknowledged")
)

// simRegressions are seeds that once failed; every default run replays
// them before the random ones.
var simRegressions = []uint64{
	5758380071134848569, // a torn unbounded progress record (msgpack) refused at Open
}

func TestSimulatedFaultsLoseNothingAcknowledged(t *testing.T) {
	seeds := []uint64{*simSeed}
	if *simSeed == 0 {
		base := uint64(time.Now().UnixNano())
		seeds = append(seeds[:0], simRegressions...)
		for i := 0; i < *simRuns; i++ {
			seeds = append(seeds, base+uint64(i)*0x9e3779b97f4a7c15)
		}
	}
	for _, seed := range seeds {
		s := newSim(t, seed)
		s.run()
	}
}

// sim is one run: the processor under test, its sink and the model.
type sim struct {
	t    *testing.T
	seed uint64
	rng  *rand.Rand
	path string
	sink *simSink
	p    *Processor
	opts Options

	// pending is what the producer has not had acknowledged yet, in the
	// order it sends it.
	pending []cdc.Message
	// model is the in-memory receiver fed every acknowledged message in
	// the order the processor applied it; want is its output, encoded.
	model *demangle.Receiver
	want  []byte
	// owed are the messages the model refused but the processor took:
	// beyond its horizon, to report as a deferred violation later.
	owed  map[string]int
	steps []string // for the failure message
	stats simStats
}

type simStats struct {
	requests, violations, deferred, faults, failures, crashes, reopens int
}

func newSim(t *testing.T, seed uint64) *sim {
	rng := rand.New(rand.NewPCG(seed, 0x5157))
	s := &sim{t: t, seed: seed, rng: rng, path: dbPath(t), sink: &simSink{}, model: demangle.New(0), owed: map[string]int{}}
	format := cdc.JSONL
	if rng.IntN(3) == 0 {
		format = cdc.Msgpack
	}
	s.opts = Options{Sink: s.sink, SinkName: "sim-out", SinkFormat: format, NoSync: true, Logger: quietLogger()}
	if rng.IntN(3) != 0 {
		s.opts.PendingMemory = int64(1 + rng.IntN(4000))
	}
	s.pending = simStream(rng)
	return s
}

func (s *sim) logf(format string, args ...any) {
	s.steps = append(s.steps, fmt.Sprintf(format, args...))
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	tail := s.steps[max(0, len(s.steps)-25):]
	s.t.Fatalf("seed %d (replay: go test ./recovery -run TestSimulatedFaults -sim.seed %d): %s\nlast steps:\n  %s",
		s.seed, s.seed, fmt.Sprintf(format, args...), strings.Join(tail, "\n  "))
}

func (s *sim) run() {
	s.open()
	for round := 0; len(s.pending) > 0; round++ {
		if round > 10_000 {
			s.fatalf("no progress after %d rounds, %d messages pending", round, len(s.pending))
		}
		switch r := s.rng.IntN(12); {
		case r == 0:
			s.reopen(false)
		case r == 1:
			s.reopen(true)
		case r <= 3:
			s.armFault()
		}
		if s.submitRound() {
			s.reopen(true) // the processor stopped: the power goes too
		}
	}
	s.reopen(s.rng.IntN(2) == 0)
	if err := s.p.Close(); err != nil {
		s.fatalf("final close: %v", err)
	}
	if len(s.want) == 0 {
		s.fatalf("the model released nothing: the stream is too short to test anything")
	}
	// Re-derived from the WAL alone, duplicates and violations found
	// beyond the horizon included, the output is the stored one.
	r, err := OpenReader(s.path, 0)
	if err != nil {
		s.fatalf("open read-only: %v", err)
	}
	v, err := r.Verify()
	r.Close()
	if err != nil || !v.Match {
		s.fatalf("verify: %+v, %v", v, err)
	}
	s.t.Logf("seed %d: %d requests, %d violations (%d deferred), %d sink faults armed, %d failures, %d power cuts, %d reopens, %d output bytes in %s, pending memory %d",
		s.seed, s.stats.requests, s.stats.violations, s.stats.deferred, s.stats.faults, s.stats.failures, s.stats.crashes, s.stats.reopens,
		len(s.want), s.opts.SinkFormat, s.opts.PendingMemory)
}

// open opens the database with a random batch size and checks it against
// the model.
func (s *sim) open() {
	s.opts.BatchMessages = 1 + s.rng.IntN(64)
	s.opts.BatchDelay = time.Duration(s.rng.IntN(300)) * time.Microsecond
	p, err := Open(s.path, s.opts)
	if err != nil {
		s.fatalf("open: %v", err)
	}
	s.p = p
	s.logf("open (batches of %d)", s.opts.BatchMessages)
	s.check()
}

// reopen closes the processor and opens it again, after cutting the power
// to the output file when crash is set.
func (s *sim) reopen(crash bool) {
	err := s.p.Close()
	if err != nil && !errors.Is(err, ErrFailed) {
		s.fatalf("close: %v", err)
	}
	// An fsync of the output file fails after its batch was acknowledged,
	// so the failure may surface only now: the power goes too.
	if crash || err != nil {
		keep := s.rng.IntN(200)
		s.sink.crash(keep)
		s.stats.crashes++
		s.logf("power cut (close: %v), keeping up to %d unsynced bytes", err, keep)
	} else {
		s.sink.reopen()
		s.logf("close (%v)", err)
	}
	s.stats.reopens++
	s.open()
}

// armFault makes the output file fail after a few more operations.
func (s *sim) armFault() {
	f := []sinkFault{shortWrite, lostSync, lateSync}[s.rng.IntN(3)]
	n := s.rng.IntN(2)
	s.sink.failAfter(f, n)
	s.stats.faults++
	s.logf("fault %d armed after %d operations", f, n)
}

// submitRound submits a few requests at once, waits for them, and feeds
// the model what was acknowledged. It reports whether the processor
// stopped on a storage failure.
func (s *sim) submitRound() (failed bool) {
	ctx := context.Background()
	type sent struct {
		msgs    []cdc.Message
		pending *Pending
	}
	var round []sent
	for k := 1 + s.rng.IntN(3); k > 0 && len(s.pending) > 0; k-- {
		n := min(len(s.pending), 1+s.rng.IntN(40))
		msgs := s.pending[:n:n]
		s.pending = s.pending[n:]
		w, err := s.p.Submit(ctx, Request{Msgs: msgs})
		if err != nil {
			s.fatalf("submit: %v", err)
		}
		round = append(round, sent{msgs, w})
		s.stats.requests++
	}
	var resend []cdc.Message
	for _, r := range round {
		res, err := r.pending.Wait(ctx)
		switch {
		case err == nil:
			s.acknowledged(r.msgs, -1)
			s.logf("appended %d messages, %d output records", len(r.msgs), res.Output)
		case isDeferred(err):
			// A message taken earlier, beyond the horizon, is dropped now;
			// the messages up to the one that loaded it are committed.
			var v *demangle.ViolationError
			errors.As(err, &v)
			s.acknowledged(r.msgs[:res.Applied], -1) // the message may be among them
			key := v.Msg.String()
			if s.owed[key] == 0 {
				s.fatalf("deferred violation by %v, which the model took", v.Msg)
			}
			s.owed[key]--
			resend = append(resend, r.msgs[res.Applied:]...)
			s.stats.violations++
			s.stats.deferred++
			s.logf("deferred violation by %v after %d of %d messages", v.Msg, res.Applied, len(r.msgs))
		case demangle.IsViolation(err):
			// Messages before the violation are committed; the producer
			// drops the bad one and sends the rest again.
			if res.Applied >= len(r.msgs) {
				s.fatalf("violation at %d of %d messages: %v", res.Applied, len(r.msgs), err)
			}
			s.acknowledged(r.msgs, res.Applied)
			resend = append(resend, r.msgs[res.Applied+1:]...)
			s.stats.violations++
			s.logf("violation at %d of %d messages", res.Applied, len(r.msgs))
		case errors.Is(err, ErrFailed):
			// A request that released more than a batch's output bound
			// may have had its first parts committed (Result.Applied).
			s.acknowledged(r.msgs[:res.Applied], -1)
			resend = append(resend, r.msgs[res.Applied:]...)
			if !failed {
				s.stats.failures++
			}
			failed = true
			s.logf("%d messages failed: %v", len(r.msgs), err)
		default:
			s.fatalf("append: %v", err)
		}
	}
	s.pending = append(resend, s.pending...)
	return failed
}

// acknowledged feeds the model msgs, which the processor committed, up to
// the violation at index bad (-1: none), which the model must refuse too.
func (s *sim) acknowledged(msgs []cdc.Message, bad int) {
	var out []cdc.Message
	for i := range msgs {
		var err error
		out, _, err = s.model.Push(out, &msgs[i], cdc.Pos{})
		switch {
		case i == bad:
			if !demangle.IsViolation(err) {
				s.fatalf("the processor refused %v as a violation, the model says %v", msgs[i], err)
			}
			s.render(out)
			return
		case err != nil && s.opts.PendingMemory > 0 && demangle.IsViolation(err):
			// Taken beyond the horizon: reported when loaded.
			s.owed[msgs[i].String()]++
			s.logf("the model refuses %v, taken beyond the horizon", msgs[i])
		case err != nil:
			s.fatalf("the processor took %v, the model refuses it: %v", msgs[i], err)
		}
	}
	s.render(out)
}

func (s *sim) render(out []cdc.Message) {
	for i := range out {
		var err error
		if s.want, err = cdc.AppendMessage(s.want, s.opts.SinkFormat, &out[i]); err != nil {
			s.fatalf("%v", err)
		}
	}
}

// check compares the output file, the stored output and the frontier
// with the model.
func (s *sim) check() {
	if got := s.sink.bytes(); !bytes.Equal(got, s.want) {
		s.fatalf("output file has %d bytes, the model %d; they differ from byte %d", len(got), len(s.want), firstDiff(got, s.want))
	}
	var stored []byte
	if end := s.p.OutputEnd(); end > 1 {
		ctx, cancel := context.WithCancel(context.Background())
		for rec, err := range s.p.Output(ctx, 1) {
			if err != nil {
				s.fatalf("read output: %v", err)
			}
			stored, err = cdc.AppendMessage(stored, s.opts.SinkFormat, &rec.Msg)
			if err != nil {
				s.fatalf("%v", err)
			}
			if rec.Seq == end-1 {
				break
			}
		}
		cancel()
	}
	if !bytes.Equal(stored, s.want) {
		s.fatalf("stored output has %d bytes, the model %d; they differ from byte %d", len(stored), len(s.want), firstDiff(stored, s.want))
	}
	pf, pdone := s.p.Frontier()
	mf, mdone := s.model.Frontier()
	if pf != mf || pdone != mdone {
		s.fatalf("frontier %d (done %v), the model's %d (done %v)", pf, pdone, mf, mdone)
	}
}

func isDeferred(err error) bool {
	var v *demangle.ViolationError
	return errors.As(err, &v) && v.Deferred
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// simStream is a mangled CDC stream over a random number of times: a few
// keys (strings and objects), statements over random segments (some
// re-batched, sometimes an unbounded last one), duplicates, reordering
// within a window, and a few conflicting updates mixed in.
func simStream(rng *rand.Rand) []cdc.Message {
	n := uint64(20 + rng.IntN(300))
	updates := map[uint64][]cdc.Message{}
	var clean []cdc.Message
	for t := uint64(0); t < n; t++ {
		for k := 0; k < 4; k++ {
			if rng.IntN(3) != 0 {
				continue
			}
			data := fmt.Sprintf(`"k%d"`, k)
			if k == 3 {
				data = fmt.Sprintf(`{"id":%d,"tags":["x","y"]}`, k)
			}
			u := cdc.NewUpdate([]byte(data), t, int64(rng.IntN(7)-3)|1)
			updates[t] = append(updates[t], u)
			clean = append(clean, u)
		}
	}
	statement := func(lo, hi uint64) cdc.Message {
		m := cdc.NewProgress(lo, hi)
		for t := lo; t < hi; t++ {
			if c := len(updates[t]); c > 0 {
				m.Progress.Counts = append(m.Progress.Counts, cdc.Count{Time: t, Count: uint64(c)})
			}
		}
		return m
	}
	for lo := uint64(0); lo < n; {
		hi := min(n, lo+1+rng.Uint64N(6))
		clean = append(clean, statement(lo, hi))
		if rng.IntN(4) == 0 {
			clean = append(clean, statement(lo, min(n, hi+3))) // re-batched
		}
		lo = hi
	}
	if rng.IntN(2) == 0 {
		clean = append(clean, cdc.Message{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: n, Unbounded: true}})
	}
	// Violations: another diff for an existing update.
	for v := rng.IntN(4); v > 0 && len(clean) > 0; v-- {
		u := clean[rng.IntN(len(clean))]
		if u.Kind == cdc.KindUpdate {
			u.Update.Diff = -u.Update.Diff
			clean = slices.Insert(clean, rng.IntN(len(clean)+1), u)
		}
	}
	var out []cdc.Message
	for _, m := range clean {
		for c := 1 + rng.IntN(5)/3; c > 0; c-- {
			out = append(out, m)
		}
	}
	for i := range out {
		j := min(len(out)-1, i+rng.IntN(24))
		out[i], out[j] = out[j], out[i]
	}
	return out
}
