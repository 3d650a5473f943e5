package clean

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

const (
	upA1    = `{"update":{"data":"a","time":1,"diff":1}}`
	upA1Bad = `{"update":{"data":"a","time":1,"diff":2}}`
	upB0    = `{"update":{"data":"b","time":0,"diff":1}}`
	prog0   = `{"progress":{"lower":0,"upper":1,"counts":[{"time":0,"count":1}]}}`
	prog1   = `{"progress":{"lower":1,"upper":2,"counts":[{"time":1,"count":1}]}}`
)

// The clean stream is the receiver's output, whatever the format, and
// byte for byte the same whether the receiver keeps everything as it is
// or packs what lies beyond its horizon (a tiny budget, and a stream
// whose progress comes last, so that it is all pending at once).
func TestStreamWritesWhatTheReceiverReleasesForAnyBudget(t *testing.T) {
	for _, f := range []cdc.Format{cdc.JSONL, cdc.Msgpack} {
		in, n := mangled(t, 300, 50, f, true)
		want := reference(t, in, f)
		for _, budget := range []int64{0, 4 << 10} {
			var out bytes.Buffer
			res, err := Stream(context.Background(), cdc.NewReader(bytes.NewReader(in), f, "in"), cdc.NewWriter(&out, f), Options{Budget: budget})
			if err != nil {
				t.Fatalf("%s, budget %d: %v", f, budget, err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("%s, budget %d: %d bytes out, want the receiver's %d", f, budget, out.Len(), len(want))
			}
			if res.Messages != uint64(n) || !res.Stuck.Done || res.PendingUpdates != 0 {
				t.Fatalf("%s, budget %d: %+v, want %d messages and a complete stream", f, budget, res, n)
			}
			if budget > 0 && res.Stats.Duplicates == 0 {
				t.Fatalf("budget %d: no duplicates counted in a mangled stream: %+v", budget, res.Stats)
			}
		}
	}
}

func TestStreamUnderFailStopsAtTheFirstBadMessageAfterWritingWhatWasReleased(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		is   func(error) bool
	}{
		{"violation", lines(upB0, prog0, upA1, upA1Bad, prog1), demangle.IsViolation},
		{"malformed", lines(upB0, prog0, "not json", prog1), func(err error) bool {
			var de *cdc.DecodeError
			return errors.As(err, &de) && de.Pos.Line == 3
		}},
		{"invalid", lines(upB0, prog0, `{"update":{"data":"a","time":1,"diff":0}}`), func(err error) bool {
			var de *cdc.DecodeError
			return errors.As(err, &de) || errors.Is(err, demangle.ErrInvalid)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, res, err := run(t, tc.in, Options{})
			if err == nil || !tc.is(err) {
				t.Fatalf("error %v, not the one expected", err)
			}
			if want := lines(upB0, prog0); out != want {
				t.Fatalf("output %q, want what time 0 released: %q", out, want)
			}
			if res.Rejected != 0 {
				t.Fatalf("%d rejected under fail", res.Rejected)
			}
		})
	}
}

func TestStreamUnderSkipAndQuarantineDropsBadMessagesAndGoesOn(t *testing.T) {
	in := lines(upB0, "not json", prog0, upA1, upA1Bad, prog1)
	want := lines(upB0, prog0, upA1, prog1)
	for _, policy := range []cdc.ErrorPolicy{cdc.Skip, cdc.Quarantine} {
		t.Run(policy.String(), func(t *testing.T) {
			var q rejects
			var log bytes.Buffer
			o := Options{OnError: policy, Log: slog.New(slog.NewTextHandler(&log, nil))}
			if policy == cdc.Quarantine {
				o.Quarantine = &q
			}
			out, res, err := run(t, in, o)
			if err != nil {
				t.Fatal(err)
			}
			if out != want {
				t.Fatalf("output %q, want %q", out, want)
			}
			if res.Rejected != 2 || res.Messages != 5 || res.Records != 4 {
				t.Fatalf("%+v: want 2 rejected of 5 messages decoded, 4 records", res)
			}
			if n := strings.Count(log.String(), "rejected input"); n != 2 {
				t.Fatalf("%d warnings, want 2:\n%s", n, log.String())
			}
			if policy == cdc.Skip {
				return
			}
			if len(q) != 2 || q[1].Pos.Line != 5 || string(q[1].Raw) != upA1Bad || !strings.Contains(q[1].Reason, "diff") ||
				q[0].Pos.Line != 2 || string(q[0].Raw) != "not json" {
				t.Fatalf("quarantined %+v: want the malformed line 2, then the violation (line 5), in input order", q)
			}
		})
	}
}

func TestStreamStartsAtTheGivenFrontier(t *testing.T) {
	out, res, err := run(t, lines(upB0, upA1, prog1), Options{Start: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out != lines(upA1, prog1) || res.Stats.Stale != 1 {
		t.Fatalf("output %q, %d stale: want time 0 stale and time 1 released", out, res.Stats.Stale)
	}
}

func TestStreamReportsWhereAnIncompleteStreamIsStuck(t *testing.T) {
	_, res, err := run(t, lines(upB0, prog0, upA1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stuck.Done || res.Stuck.Time != 1 || res.Stuck.Covered || res.PendingTimes != 1 || res.PendingUpdates != 1 {
		t.Fatalf("%+v: want stuck at time 1, waiting for progress, one update held", res)
	}
}

func TestStreamQuarantineNeedsARejectWriter(t *testing.T) {
	if _, _, err := run(t, lines(upB0), Options{OnError: cdc.Quarantine}); !errors.Is(err, ErrNoQuarantine) {
		t.Fatalf("error %v, want ErrNoQuarantine", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

type failingRejects struct{}

func (failingRejects) Write(*cdc.Reject) error {
	return errors.New("q.jsonl: write quarantine: disk full")
}

func TestStreamStopsWhenItCannotWrite(t *testing.T) {
	_, err := Stream(context.Background(), cdc.NewReader(strings.NewReader(lines(upB0, prog0)), cdc.JSONL, "in"),
		cdc.NewWriter(failingWriter{}, cdc.JSONL), Options{})
	var we *WriteError
	if !errors.As(err, &we) || we.Quarantine || err.Error() != "write output: disk full" {
		t.Fatalf("error %v (%T), want the output's *WriteError", err, err)
	}
	_, _, err = run(t, lines(upB0, "bad", prog0), Options{OnError: cdc.Quarantine, Quarantine: failingRejects{}})
	if !errors.As(err, &we) || !we.Quarantine || err.Error() != "q.jsonl: write quarantine: disk full" {
		t.Fatalf("error %v (%T), want the quarantine's *WriteError, as the writer worded it", err, err)
	}
}

func TestStreamStopsOnceTheHeapPassesMaxMemory(t *testing.T) {
	runtime.GC() // so that the live heap is known
	_, _, err := run(t, lines(upB0, prog0, upA1), Options{MaxMemory: 1})
	var me *MemoryError
	if !errors.As(err, &me) || me.Max != 1 || me.Live <= 1 || me.Frontier != 1 || me.Updates != 1 {
		t.Fatalf("error %v, want a *MemoryError at frontier 1 with one update held", err)
	}
	if !strings.Contains(err.Error(), "past --max-memory 1 bytes") || !strings.HasSuffix(err.Error(), "keeps it on disk, or raise --max-memory") {
		t.Fatalf("error %q does not name the limit and what to do", err)
	}
}

func TestStreamStopsWhenTheContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Stream(ctx, cdc.NewReader(strings.NewReader(lines(upB0, prog0)), cdc.JSONL, "in"), cdc.NewWriter(io.Discard, cdc.JSONL), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestStreamReportsProgressUpToTheEndOfTheInput(t *testing.T) {
	in, n := mangled(t, 100, 50, cdc.JSONL, false)
	var got []Progress
	o := Options{Progress: func(p Progress) { got = append(got, p) }}
	if _, err := Stream(context.Background(), cdc.NewReader(bytes.NewReader(in), cdc.JSONL, "in"), cdc.NewWriter(io.Discard, cdc.JSONL), o); err != nil {
		t.Fatal(err)
	}
	msgs := 0
	for i, p := range got {
		if i > 0 && p.Offset < got[i-1].Offset {
			t.Fatalf("offset went back: %+v after %+v", p, got[i-1])
		}
		msgs += p.Messages
	}
	last := got[len(got)-1]
	if msgs != n || last.Offset != int64(len(in)) || !last.Done || len(got) < n/BatchSize {
		t.Fatalf("%d reports for %d messages, last %+v: want every message counted up to byte %d, complete", len(got), msgs, last, len(in))
	}
}
