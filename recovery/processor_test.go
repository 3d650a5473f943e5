package recovery

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

func TestOutputMatchesTheInMemoryReceiverAcrossReopens(t *testing.T) {
	msgs := mangled(1, cleanStream(1, 0, 3000))
	want := inMemory(t, msgs)
	path := dbPath(t)
	for part := 0; part < 3; part++ {
		p := openTest(t, path, Options{BatchMessages: 500})
		n := len(msgs) / 3
		hi := (part + 1) * n
		if part == 2 {
			hi = len(msgs)
		}
		appendAll(t, p, msgs[part*n:hi], 97)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := storedOutput(t, path); !bytes.Equal(got, want) {
		t.Fatalf("stored output differs from the in-memory receiver's (%d vs %d bytes)", len(got), len(want))
	}
	r, _ := OpenReader(path, 0)
	defer r.Close()
	st, err := r.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Frontier != 3000 || st.PendingTimes != 0 || st.Reason != "waiting for a progress statement covering time 3000" {
		t.Fatalf("status %+v", st)
	}
	if st.Duplicates == 0 || st.AcceptedUpdates+st.AcceptedProgress != st.WAL.Entries {
		t.Fatalf("counts: %+v", st)
	}
}

func TestExactlyOnceSinkIsCutBackToTheCommittedSize(t *testing.T) {
	dir := t.TempDir()
	path, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	msgs := cleanStream(2, 0, 500)
	sink, err := OpenFileSink(out, FileSinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := openTest(t, path, Options{Sink: sink, SinkName: out})
	appendAll(t, p, msgs[:300], 100)
	p.Close()
	at := checkpointOf(t, path).Sink
	sink, _ = OpenFileSink(out, FileSinkOptions{})
	p = openTest(t, path, Options{Sink: sink, SinkName: out})
	appendAll(t, p, msgs[300:600], 100)
	p.Close()
	committed, _ := os.ReadFile(out)
	// A crash during the write of committed records whose fsync no commit
	// recorded leaves a torn tail past the committed size.
	asLagging(t, path, at)
	os.Truncate(out, at.Size+23)
	sink, _ = OpenFileSink(out, FileSinkOptions{})
	p = openTest(t, path, Options{Sink: sink, SinkName: out})
	if got, _ := os.ReadFile(out); !bytes.Equal(got, committed) {
		t.Fatalf("tail not cut and caught up: %d bytes, want %d", len(got), len(committed))
	}
	appendAll(t, p, msgs[600:], 100)
	p.Close()
	if got, _ := os.ReadFile(out); !bytes.Equal(got, inMemory(t, msgs)) {
		t.Fatal("output file differs from an uninterrupted run")
	}
}

func TestALateOutputFileReceivesTheWholeStream(t *testing.T) {
	dir := t.TempDir()
	path, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	msgs := cleanStream(3, 0, 300)
	p := openTest(t, path, Options{})
	appendAll(t, p, msgs[:200], 50)
	p.Close()
	sink, _ := OpenFileSink(out, FileSinkOptions{})
	p = openTest(t, path, Options{Sink: sink, SinkName: out})
	appendAll(t, p, msgs[200:], 50)
	p.Close()
	if got, _ := os.ReadFile(out); !bytes.Equal(got, inMemory(t, msgs)) {
		t.Fatal("late output file lacks the earlier records")
	}
}

func TestAShortenedOrForeignOutputFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	path, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	sink, _ := OpenFileSink(out, FileSinkOptions{})
	p := openTest(t, path, Options{Sink: sink, SinkName: out})
	appendAll(t, p, cleanStream(4, 0, 100), 50)
	p.Close()
	os.Truncate(out, 10)
	sink, _ = OpenFileSink(out, FileSinkOptions{})
	if _, err := Open(path, Options{Sink: sink, SinkName: out, Logger: quietLogger()}); !errors.Is(err, ErrSinkShort) {
		t.Fatalf("got %v, want ErrSinkShort", err)
	}
	sink.Close()
	os.Remove(out)
	sink, _ = OpenFileSink(out, FileSinkOptions{})
	if _, err := Open(path, Options{Sink: sink, SinkName: out, Logger: quietLogger()}); !errors.Is(err, ErrSinkShort) || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("a deleted output file: got %v, want ErrSinkShort saying it is missing", err)
	}
	sink.Close()
	other := filepath.Join(dir, "other.jsonl")
	os.WriteFile(other, []byte("someone else's\n"), 0o644)
	sink, _ = OpenFileSink(other, FileSinkOptions{})
	if _, err := Open(path, Options{Sink: sink, SinkName: other, Logger: quietLogger()}); !errors.Is(err, ErrSinkForeign) {
		t.Fatalf("got %v, want ErrSinkForeign", err)
	}
}

func TestPolicyFailCommitsWhatCameBeforeTheViolation(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{})
	bad := []cdc.Message{
		cdc.NewUpdate([]byte(`"a"`), 0, 1),
		cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 1}),
		cdc.NewUpdate([]byte(`"b"`), 1, 1),
		cdc.NewUpdate([]byte(`"b"`), 1, 2), // conflicting diff
		cdc.NewUpdate([]byte(`"c"`), 1, 1),
	}
	res, err := p.Append(context.Background(), bad, nil)
	if !demangle.IsViolation(err) || res.Applied != 3 || res.Accepted != 3 {
		t.Fatalf("got %+v, %v", res, err)
	}
	p.Close()
	r, _ := OpenReader(path, 0)
	defer r.Close()
	st, _ := r.Status()
	if st.Frontier != 1 || st.WAL.Entries != 3 || st.Violations != 1 || st.OutputRecords != 2 {
		t.Fatalf("status after failure: %+v", st)
	}
}

func TestPoliciesSkipAndQuarantineSetTheMessageAside(t *testing.T) {
	for _, pol := range []cdc.ErrorPolicy{cdc.Skip, cdc.Quarantine} {
		t.Run(pol.String(), func(t *testing.T) {
			path := dbPath(t)
			p := openTest(t, path, Options{OnError: pol})
			msgs := []cdc.Message{
				cdc.NewUpdate([]byte(`"a"`), 0, 1),
				cdc.NewUpdate([]byte(`"a"`), 0, -1),
				cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 1}),
			}
			pos := []cdc.Pos{{Source: "in", Line: 1}, {Source: "in", Line: 2}, {Source: "in", Line: 3}}
			res, err := p.Append(context.Background(), msgs, pos)
			if err != nil || res.Applied != 3 || res.Skipped+res.Quarantined != 1 {
				t.Fatalf("got %+v, %v", res, err)
			}
			p.Close()
			r, _ := OpenReader(path, 0)
			defer r.Close()
			var q []QuarantineRecord
			r.Quarantine(func(rec *QuarantineRecord) error { q = append(q, *rec); return nil })
			st, _ := r.Status()
			if st.Frontier != 1 {
				t.Fatalf("frontier %d", st.Frontier)
			}
			if pol == cdc.Quarantine {
				if len(q) != 1 || q[0].Pos.Line != 2 || !strings.Contains(q[0].Reason, "conflicting-diff") || st.Quarantined != 1 {
					t.Fatalf("quarantine %+v, status %+v", q, st)
				}
			} else if len(q) != 0 || st.Skipped != 1 {
				t.Fatalf("quarantine %+v, status %+v", q, st)
			}
		})
	}
}

func TestCursorCommitsWithItsBatchAndNotOnFailure(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{})
	ctx := context.Background()
	w, _ := p.Submit(ctx, Request{Msgs: cleanStream(5, 0, 10), Cursor: "input", CursorValue: []byte("offset=10")})
	if _, err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	bad := []cdc.Message{cdc.NewUpdate([]byte(`"x"`), 20, 1), cdc.NewUpdate([]byte(`"x"`), 20, 3)}
	w, _ = p.Submit(ctx, Request{Msgs: bad, Cursor: "input", CursorValue: []byte("offset=20")})
	if _, err := w.Wait(ctx); err == nil {
		t.Fatal("violation not reported")
	}
	p.Close()
	p = openTest(t, path, Options{})
	defer p.Close()
	if got := string(p.Cursor("input")); got != "offset=10" {
		t.Fatalf("cursor %q", got)
	}
}

func TestStatusNamesWhatTheFrontierWaitsFor(t *testing.T) {
	msgs := cleanStream(6, 0, 50)
	cases := []struct {
		name     string
		drop     func(m cdc.Message) bool
		waiting  string
		reason   string
		frontier uint64
	}{
		{"withheld progress", func(m cdc.Message) bool { return m.Kind == cdc.KindProgress && m.Progress.Lower == 17 },
			"progress", "waiting for a progress statement covering time 17", 17},
		{"withheld update", firstUpdateAt(23), "updates", "time 23 holds", 23},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in []cdc.Message
			for _, m := range msgs {
				if !tc.drop(m) {
					in = append(in, m)
				}
			}
			path := dbPath(t)
			p := openTest(t, path, Options{})
			appendAll(t, p, in, 1000)
			live, _ := p.Status()
			p.Close()
			r, _ := OpenReader(path, 0)
			defer r.Close()
			st, _ := r.Status()
			for _, s := range []Status{live, st} {
				if s.Waiting != tc.waiting || !strings.HasPrefix(s.Reason, tc.reason) || *s.FirstIncompleteTime != tc.frontier {
					t.Fatalf("status: waiting %q, reason %q, first incomplete %d", s.Waiting, s.Reason, *s.FirstIncompleteTime)
				}
			}
		})
	}
}

// firstUpdateAt matches the first update at time t it is asked about.
func firstUpdateAt(t uint64) func(cdc.Message) bool {
	done := false
	return func(m cdc.Message) bool {
		if !done && m.Kind == cdc.KindUpdate && m.Update.Time == t {
			done = true
			return true
		}
		return false
	}
}

// An Append or Submit whose context has ended already applies nothing; the
// select that queues a request used to pick the queue about half the time.
func TestAnEndedContextAppendsNothing(t *testing.T) {
	p := openTest(t, dbPath(t), Options{})
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var msgs []cdc.Message
	for i := range 100 {
		m := cdc.NewUpdate([]byte(strconv.Itoa(i)), 0, 1)
		msgs = append(msgs, m)
		if _, err := p.Append(ctx, []cdc.Message{m}, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("Append %d with an ended context: %v", i, err)
		}
		if w, err := p.Submit(ctx, Request{Msgs: []cdc.Message{m}}); w != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Submit %d with an ended context: %v, %v", i, w, err)
		}
	}
	res, err := p.Append(context.Background(), msgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != len(msgs) {
		t.Fatalf("%d of the %d messages appended with an ended context were committed", res.Duplicates, len(msgs))
	}
}
