package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/internal/streamgen"
	"github.com/cdclog/cdclog/recovery"
	"github.com/cdclog/cdclog/store"
)

// soak reports whether the longer cases run (CDCLOG_BROKER_SOAK=1).
func soak() bool { return os.Getenv("CDCLOG_BROKER_SOAK") != "" }

// mangled returns a generated stream of times times, duplicated and
// reordered, as `cdclog gen | cdclog mangle` writes it.
func mangled(times uint64, seed int64) []cdc.Message {
	var msgs []cdc.Message
	gen := streamgen.Gen(streamgen.GenOptions{Seed: seed, Times: times})
	for m := range streamgen.Mangle(gen, streamgen.MangleOptions{Seed: seed + 1, MaxDelay: 16, MaxCopies: 3}) {
		msgs = append(msgs, m)
	}
	return msgs
}

// demangled is what `cdclog demangle` writes for msgs: the in-memory
// receiver's output.
func demangled(t *testing.T, msgs []cdc.Message) []cdc.Message {
	t.Helper()
	r := demangle.New(0)
	var out []cdc.Message
	for i := range msgs {
		var err error
		if out, _, err = r.Push(out, &msgs[i], cdc.Pos{}); err != nil {
			t.Fatalf("demangle message %d: %v", i, err)
		}
	}
	return out
}

// perTime returns each time's updates (data and diff, sorted) and the
// frontier the progress statements reach: what two runs of one collection
// agree on even when their progress statements are cut differently.
func perTime(t *testing.T, msgs []cdc.Message) (map[uint64][]string, uint64) {
	t.Helper()
	updates := map[uint64][]string{}
	var frontier uint64
	for _, m := range msgs {
		switch m.Kind {
		case cdc.KindUpdate:
			updates[m.Update.Time] = append(updates[m.Update.Time], fmt.Sprintf("%s %d", m.Update.Data, m.Update.Diff))
		case cdc.KindProgress:
			if m.Progress.Lower != frontier {
				t.Fatalf("progress [%d, %d) does not start at the frontier %d", m.Progress.Lower, m.Progress.Upper, frontier)
			}
			for _, c := range m.Progress.Counts {
				if got := uint64(len(updates[c.Time])); got != c.Count {
					t.Fatalf("time %d: %d updates, progress says %d", c.Time, got, c.Count)
				}
			}
			frontier = m.Progress.Upper
		}
	}
	for _, u := range updates {
		slices.Sort(u)
	}
	return updates, frontier
}

// outRecord is one record read from an output broker.
type outRecord struct {
	Seq   uint64
	DB    string
	Value []byte
	Where string
}

// checkOutput asserts that out holds sequence numbers 1..N once each, in
// order, N being the processor's whole output, and that its updates per
// time are those of `cdclog demangle` of input.
func checkOutput(t *testing.T, out []outRecord, end uint64, input []cdc.Message) {
	t.Helper()
	if uint64(len(out)) != end-1 {
		t.Errorf("output holds %d records, the database %d", len(out), end-1)
	}
	var msgs []cdc.Message
	for i, r := range out {
		if r.Seq != uint64(i+1) {
			t.Fatalf("output record %d (%s) has sequence number %d, want %d", i, r.Where, r.Seq, i+1)
		}
		var m cdc.Message
		if err := cdc.ParseJSON(r.Value, &m); err != nil {
			t.Fatalf("%s: %v", r.Where, err)
		}
		msgs = append(msgs, m)
	}
	got, gf := perTime(t, msgs)
	want, wf := perTime(t, demangled(t, input))
	if gf != wf {
		t.Errorf("output reaches time %d, demangle %d", gf, wf)
	}
	for tm, w := range want {
		if !slices.Equal(got[tm], w) {
			t.Fatalf("time %d: output %v, demangle %v", tm, got[tm], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("output has updates at %d times, demangle %d", len(got), len(want))
	}
}

// openDB opens (creating) a database and returns it with its id.
func openDB(t *testing.T, path string) (*recovery.Processor, string) {
	t.Helper()
	id, err := store.ReadID(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := recovery.Open(path, recovery.Options{BatchDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return p, id
}

func tempDB(t *testing.T) string { return filepath.Join(t.TempDir(), "s.db") }

// ingest runs src through Processor.Ingest until ctx ends or src fails.
func ingest(ctx context.Context, p *recovery.Processor, src recovery.Source) error {
	_, err := p.Ingest(ctx, src, recovery.IngestOptions{})
	return err
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	waitForState(t, timeout, what, cond, func() string { return "" })
}

// waitForState is waitFor, saying state() when it times out.
func waitForState(t *testing.T, timeout time.Duration, what string, cond func() bool, state func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; %s", timeout, what, state())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// complete reports whether the processor's frontier reached times.
func complete(p *recovery.Processor, times uint64) bool {
	f, done := p.Frontier()
	return done || f >= times
}

// isCtx reports whether err is a context's end.
func isCtx(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func quietLogs() func() {
	return func() {}
}

var _ = strings.Contains
