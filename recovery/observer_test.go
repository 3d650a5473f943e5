package recovery

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

// countingObserver adds up what an Observer is told.
type countingObserver struct {
	mu      sync.Mutex
	batches int
	total   BatchStats
	syncs   int
	synced  time.Duration
}

func (o *countingObserver) Committed(b BatchStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.batches++
	o.total.Requests += b.Requests
	o.total.Messages += b.Messages
	o.total.Refused += b.Refused
	o.total.Commit += b.Commit
	o.total.Write += b.Write
	o.total.Totals.Add(b.Totals)
}

func (o *countingObserver) OutputSynced(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.syncs++
	o.synced += d
}

func (o *countingObserver) snapshot() (int, BatchStats, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.batches, o.total, o.syncs
}

func TestObserverIsToldEveryCommittedMessageAndItsOutcome(t *testing.T) {
	dir := t.TempDir()
	sink, err := OpenFileSink(filepath.Join(dir, "out.jsonl"), FileSinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obs := &countingObserver{}
	p := openTest(t, filepath.Join(dir, "state.db"), Options{Sink: sink, SinkFormat: cdc.JSONL, Observer: obs})
	msgs := mangled(3, cleanStream(3, 0, 200))
	var want Result
	for i := 0; i < len(msgs); i += 100 {
		res, err := p.Append(context.Background(), msgs[i:min(i+100, len(msgs))], nil)
		if err != nil {
			t.Fatal(err)
		}
		want.Accepted += res.Accepted
		want.Duplicates += res.Duplicates
		want.Stale += res.Stale
		want.Output += res.Output
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	batches, got, syncs := obs.snapshot()
	requests := (len(msgs) + 99) / 100
	if got.Requests != requests || got.Messages != len(msgs) || got.Totals.Applied != len(msgs) {
		t.Errorf("observer saw %d requests, %d messages, %d applied; want %d, %d, %d",
			got.Requests, got.Messages, got.Totals.Applied, requests, len(msgs), len(msgs))
	}
	if got.Totals.Accepted != want.Accepted || got.Totals.Duplicates != want.Duplicates ||
		got.Totals.Stale != want.Stale || got.Totals.Output != want.Output {
		t.Errorf("observer totals %+v, the results add up to %+v", got.Totals, want)
	}
	if batches == 0 || batches > requests {
		t.Errorf("%d batches for %d requests", batches, requests)
	}
	if got.Commit <= 0 || got.Write <= 0 || got.Write > got.Commit {
		t.Errorf("commit time %v, write time %v: want 0 < write <= commit", got.Commit, got.Write)
	}
	if syncs == 0 {
		t.Error("the output file's fsyncs were not reported")
	}
}

func TestObserverCountsARequestStoppedByAViolationAsRefused(t *testing.T) {
	obs := &countingObserver{}
	p := openTest(t, dbPath(t), Options{Observer: obs})
	defer p.Close()
	a := cdc.Message{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"k"`), Time: 1, Diff: 1}}
	b := a
	b.Update.Diff = 2
	_, err := p.Append(context.Background(), []cdc.Message{a, b}, nil)
	if !demangle.IsViolation(err) {
		t.Fatalf("got %v, want a violation", err)
	}
	_, got, _ := obs.snapshot()
	if got.Refused != 1 || got.Messages != 2 || got.Totals.Accepted != 1 {
		t.Errorf("refused %d, messages %d, accepted %d; want 1, 2, 1", got.Refused, got.Messages, got.Totals.Accepted)
	}
}

func TestResultNamesTheFirstRejectedMessage(t *testing.T) {
	p := openTest(t, dbPath(t), Options{OnError: cdc.Skip})
	defer p.Close()
	a := cdc.Message{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"k"`), Time: 1, Diff: 1}}
	b, c := a, a
	b.Update.Diff, c.Update.Diff = 2, 3
	pos := []cdc.Pos{{Source: "r", Line: 1}, {Source: "r", Line: 2}, {Source: "r", Line: 3}}
	res, err := p.Append(context.Background(), []cdc.Message{a, b, c}, pos)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 2 || res.Rejected == nil || res.Rejected.Pos != pos[1] {
		t.Fatalf("skipped %d, first rejected %+v; want 2 and the message at %v", res.Skipped, res.Rejected, pos[1])
	}
	res, err = p.Append(context.Background(), []cdc.Message{a}, nil)
	if err != nil || res.Rejected != nil {
		t.Fatalf("a request with nothing rejected: %+v, %v", res, err)
	}
}

func TestErrSaysWhetherTheProcessorRuns(t *testing.T) {
	p := openTest(t, dbPath(t), Options{})
	if err := p.Err(); err != nil {
		t.Fatalf("a running processor: Err = %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Err(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: Err = %v, want ErrClosed", err)
	}
}

func TestConsumerPositionsListsEveryCommittedConsumer(t *testing.T) {
	p := openTest(t, dbPath(t), Options{})
	defer p.Close()
	appendAll(t, p, cleanStream(1, 0, 20), 50)
	for name, seq := range map[string]uint64{"a": 3, "b": 7} {
		c, err := p.Consumer(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Commit(context.Background(), seq); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	got, err := p.ConsumerPositions()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a"] != 4 || got["b"] != 8 {
		t.Fatalf("positions %v, want a:4 b:8", got)
	}
}

func TestLogSourceNamesTheRequestInTheWALOnly(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{})
	for i := range 3 {
		m := cdc.Message{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"k"`), Time: uint64(i), Diff: 1}}
		pos := []cdc.Pos{{Source: "request " + string(rune('1'+i)), Line: 1}}
		if _, err := p.Append(context.Background(), []cdc.Message{m}, pos); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p.Submit(context.Background(), Request{LogSource: "http",
		Msgs: []cdc.Message{{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"k"`), Time: 9, Diff: 1}}},
		Pos:  []cdc.Pos{{Source: "request 4", Line: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.cp.Sources; len(got) != 4 || got[3] != "http" {
		t.Fatalf("sources %q, want the three request names and http", got)
	}
}

// bigTimeMsgs returns n updates at time 1 and the statement that
// completes it: a release of n+1 records.
func bigTimeMsgs(n int) []cdc.Message {
	msgs := make([]cdc.Message, 0, n+1)
	for k := range n {
		msgs = append(msgs, cdc.NewUpdate([]byte(fmt.Sprintf(`{"id":%d}`, k)), 1, 1))
	}
	return append(msgs, cdc.NewProgress(0, 2, cdc.Count{Time: 1, Count: uint64(n)}))
}

// TestARequestReleasedInPartsIsCountedOnce: a request whose release
// spans several commits (the output bound is 2*BatchMessages records)
// and that a violation then stops is counted once as refused, its
// messages once, and its output in full, in its Result as in the
// Observer's totals.
func TestARequestReleasedInPartsIsCountedOnce(t *testing.T) {
	for _, stop := range []bool{false, true} {
		t.Run(fmt.Sprintf("stopped=%v", stop), func(t *testing.T) {
			obs := &countingObserver{}
			p := openTest(t, dbPath(t), Options{Observer: obs, BatchMessages: 16})
			defer p.Close()
			msgs := bigTimeMsgs(500)
			if stop {
				// The statement that completes time 1 also says time 3
				// holds nothing, against an earlier count: accepted in
				// part, a violation that stops the request while the
				// release it caused is owed.
				done := msgs[len(msgs)-1]
				done.Progress.Upper = 4
				msgs = append([]cdc.Message{cdc.NewProgress(3, 4, cdc.Count{Time: 3, Count: 2})}, msgs[:len(msgs)-1]...)
				msgs = append(msgs, done, cdc.NewUpdate([]byte(`"never applied"`), 3, 1))
			}
			res, err := p.Append(context.Background(), msgs, nil)
			if stop != demangle.IsViolation(err) {
				t.Fatalf("got %v, want a violation: %v", err, stop)
			}
			if err != nil && !stop {
				t.Fatal(err)
			}
			batches, got, _ := obs.snapshot()
			if batches < 3 {
				t.Fatalf("%d batches: the release did not go out in parts", batches)
			}
			wantRefused := 0
			if stop {
				wantRefused = 1
			}
			if got.Refused != wantRefused || got.Messages != len(msgs) || got.Requests != 1 {
				t.Errorf("observer: refused %d, messages %d, requests %d; want %d, %d, 1", got.Refused, got.Messages, got.Requests, wantRefused, len(msgs))
			}
			if res.Output != 501 || got.Totals.Output != 501 {
				t.Errorf("output: the result says %d, the observer %d; want 501", res.Output, got.Totals.Output)
			}
			if st, err := p.Status(); err != nil || st.Waiting == "release" {
				t.Errorf("status once the release is done: waiting %q, %v", st.Waiting, err)
			}
		})
	}
}
