package demangle

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

func upd(data string, t uint64, diff int64) cdc.Message {
	return cdc.NewUpdate([]byte(data), t, diff)
}

func prog(lo, hi uint64, counts ...uint64) cdc.Message {
	var cs []cdc.Count
	for i := 0; i+1 < len(counts); i += 2 {
		cs = append(cs, cdc.Count{Time: counts[i], Count: counts[i+1]})
	}
	return cdc.NewProgress(lo, hi, cs...)
}

func unbounded(lo uint64, counts ...uint64) cdc.Message {
	m := prog(lo, lo+1, counts...)
	m.Progress.Unbounded = true
	return m
}

// pushAll pushes msgs at lines 1, 2, ... and fails on any error.
func pushAll(t *testing.T, r *Receiver, msgs ...cdc.Message) []cdc.Message {
	t.Helper()
	var out []cdc.Message
	for i := range msgs {
		var err error
		if out, _, err = r.Push(out, &msgs[i], cdc.Pos{Source: "in", Line: int64(i + 1)}); err != nil {
			t.Fatalf("push %v: %v", msgs[i], err)
		}
	}
	return out
}

func render(out []cdc.Message) string {
	var s []string
	for _, m := range out {
		s = append(s, m.String())
	}
	return strings.Join(s, "; ")
}

// TestViolationsAreReportedAndLeaveTheContradictedTimeUnchanged: each
// violation names both messages, and what the receiver holds about the
// time they disagree about is what it was. A message that says nothing
// else leaves the whole state unchanged; a statement's claims about other
// times are held (partial: Push says Accepted as well as the violation).
func TestViolationsAreReportedAndLeaveTheContradictedTimeUnchanged(t *testing.T) {
	cases := []struct {
		name    string
		before  []cdc.Message
		bad     cdc.Message
		kind    ViolationKind
		time    uint64
		earlier string
		partial bool
	}{
		{"two diffs for one data and time", []cdc.Message{upd(`"a"`, 5, 1)}, upd(`"a"`, 5, 2),
			ConflictingDiff, 5, `update("a", t=5, +1)`, false},
		{"update beyond the count", []cdc.Message{prog(5, 6, 5, 1), upd(`"a"`, 5, 1)}, upd(`"b"`, 5, 1),
			TooManyUpdates, 5, "progress[5, 6){5:1}", false},
		{"count below the updates held", []cdc.Message{upd(`"a"`, 5, 1), upd(`"b"`, 5, 1)}, prog(5, 6, 5, 1),
			TooManyUpdates, 5, `update("b", t=5, +1)`, false},
		{"update at a zero-count time", []cdc.Message{prog(3, 9, 5, 1)}, upd(`"a"`, 4, 1),
			UpdateAtZeroCount, 4, "progress[3, 9){5:1}", false},
		{"zero count for a time with updates", []cdc.Message{upd(`"a"`, 4, 1)}, prog(3, 9, 5, 1),
			UpdateAtZeroCount, 4, `update("a", t=4, +1)`, true},
		{"two counts for one time", []cdc.Message{prog(5, 6, 5, 2)}, prog(4, 8, 5, 3),
			ConflictingCounts, 5, "progress[5, 6){5:2}", true},
		{"a count where another statement said zero", []cdc.Message{prog(4, 8)}, prog(5, 6, 5, 1),
			ConflictingCounts, 5, "progress[4, 8){}", false},
		{"a zero where another statement gave a count", []cdc.Message{prog(5, 6, 5, 1)}, prog(2, 9),
			ConflictingCounts, 5, "progress[5, 6){5:1}", true},
		{"unbounded zero against a later count", []cdc.Message{prog(7, 8, 7, 1)}, unbounded(6),
			ConflictingCounts, 7, "progress[7, 8){7:1}", true},
		{"update under an unbounded zero", []cdc.Message{unbounded(6)}, upd(`"x"`, 1<<40, 1),
			UpdateAtZeroCount, 1 << 40, "progress[6, ∞){}", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Withhold time 0 so nothing is emitted and the state stays.
			r := New(0)
			pushAll(t, r, tc.before...)
			snap := stateOf(t, r)
			atTime := timeFacts(r, tc.time)
			stats := r.Stats()
			_, o, err := r.Push(nil, &tc.bad, cdc.Pos{Source: "in", Line: 99})
			var v *ViolationError
			if !errors.As(err, &v) {
				t.Fatalf("got %v, want a violation", err)
			}
			if v.Kind != tc.kind || v.Time != tc.time {
				t.Errorf("got %s at %d, want %s at %d", v.Kind, v.Time, tc.kind, tc.time)
			}
			if got := v.Earlier.String(); got != tc.earlier {
				t.Errorf("earlier message %s, want %s", got, tc.earlier)
			}
			msg := err.Error()
			if !strings.Contains(msg, "in:99") || !strings.Contains(msg, v.EarlierAt.String()) || v.EarlierAt.Line == 0 {
				t.Errorf("error %q does not name both positions", msg)
			}
			if got := timeFacts(r, tc.time); got != atTime {
				t.Errorf("time %d: %s, was %s", tc.time, got, atTime)
			}
			stats.Violations++
			if tc.partial {
				if o != Accepted {
					t.Errorf("outcome %v, want accepted: the statement's other claims are held", o)
				}
				stats.Progress++
			} else if o != 0 {
				t.Errorf("outcome %v for a rejected message", o)
			}
			if r.Stats() != stats {
				t.Errorf("stats %+v, want %+v", r.Stats(), stats)
			}
			if unchanged := bytes.Equal(snap, stateOf(t, r)); unchanged == tc.partial {
				t.Errorf("state unchanged: %v, want %v", unchanged, !tc.partial)
			}
		})
	}
}

// timeFacts says what r holds about time t.
func timeFacts(r *Receiver, t uint64) string {
	s := fmt.Sprintf("covered %v", r.cover.covers(t))
	if ts := r.times.get(t); ts != nil {
		s += fmt.Sprintf(", count %d (known %v), %d updates", ts.count, ts.hasCount, ts.len())
	}
	return s
}

func TestTimeIsReleasedOnlyWhenEveryEarlierTimeIsComplete(t *testing.T) {
	// The seed demangler's flaw: time 21 complete while 20 is in flight.
	r := New(20)
	out := pushAll(t, r, prog(21, 22, 21, 1), upd(`"b"`, 21, 1))
	if len(out) != 0 {
		t.Fatalf("released %s before time 20 was complete", render(out))
	}
	out = pushAll(t, r, upd(`"a"`, 20, -1))
	if len(out) != 0 {
		t.Fatalf("released %s without progress for time 20", render(out))
	}
	out = pushAll(t, r, prog(20, 21, 20, 1))
	want := `update("a", t=20, -1); update("b", t=21, +1); progress[20, 22){20:1 21:1}`
	if got := render(out); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func TestDuplicatesAndStaleMessagesAreDroppedAndCounted(t *testing.T) {
	r := New(0)
	a, p := upd(`"a"`, 0, 1), prog(0, 1, 0, 1)
	var outcomes []Outcome
	for _, m := range []cdc.Message{a, a, p, p, a, prog(0, 1, 0, 1)} {
		_, o, err := r.Push(nil, &m, cdc.Pos{})
		if err != nil {
			t.Fatal(err)
		}
		outcomes = append(outcomes, o)
	}
	want := []Outcome{Accepted, Duplicate, Accepted, Stale, Stale, Stale}
	if fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Fatalf("outcomes %v, want %v", outcomes, want)
	}
	s := r.Stats()
	if s.Updates != 1 || s.Progress != 1 || s.Duplicates != 1 || s.Stale != 3 || s.EmittedUpdates != 1 || s.EmittedTimes != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRebatchedProgressIsAcceptedWhenConsistent(t *testing.T) {
	r := New(0)
	out := pushAll(t, r, prog(5, 10, 7, 1), prog(0, 5, 2, 1), upd(`"x"`, 2, 1), prog(0, 10, 2, 1, 7, 1))
	if got := render(out); got != `progress[0, 2){}; update("x", t=2, +1); progress[2, 7){2:1}` {
		t.Fatalf("got %s", got)
	}
	_, o, err := r.Push(nil, ptr(prog(3, 9, 7, 1)), cdc.Pos{})
	if err != nil || o != Duplicate {
		t.Fatalf("re-batched statement: %v %v, want a duplicate", o, err)
	}
}

func TestZeroCountStretchesAreSkippedInOneStep(t *testing.T) {
	r := New(0)
	out := pushAll(t, r, prog(0, math.MaxUint64-5, 1<<50, 1), upd(`"z"`, 1<<50, 3))
	want := fmt.Sprintf(`progress[0, %d){}; update("z", t=%d, +3); progress[%d, %d){%d:1}`,
		uint64(1<<50), uint64(1<<50), uint64(1<<50), uint64(math.MaxUint64-5), uint64(1<<50))
	if got := render(out); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	out = pushAll(t, r, unbounded(math.MaxUint64-1, math.MaxUint64, 1), upd(`"m"`, math.MaxUint64, -1))
	if f, done := r.Frontier(); f != math.MaxUint64-5 || done {
		t.Fatalf("frontier %d done %v: the gap [max-5, max-1) is not covered", f, done)
	}
	out = pushAll(t, r, prog(math.MaxUint64-5, math.MaxUint64-1))
	if _, done := r.Frontier(); !done {
		t.Fatalf("not done after the whole time line is covered: %s", render(out))
	}
	if got := render(out); !strings.HasSuffix(got, `progress[18446744073709551610, ∞){18446744073709551615:1}`) {
		t.Fatalf("got %s", got)
	}
	if _, o, _ := r.Push(nil, ptr(upd(`"late"`, 3, 1)), cdc.Pos{}); o != Stale {
		t.Fatalf("update after the end: %v, want stale", o)
	}
}

func TestStuckNamesTheFirstIncompleteTimeAndWhy(t *testing.T) {
	r := New(0)
	pushAll(t, r, prog(0, 3, 1, 2), upd(`"a"`, 1, 1))
	if got := r.Stuck().String(); got != "time 1 holds 1 of 2 expected updates" {
		t.Fatalf("got %q", got)
	}
	pushAll(t, r, upd(`"b"`, 1, 1), upd(`"c"`, 4, 1))
	if got := r.Stuck().String(); got != "waiting for a progress statement covering time 3" {
		t.Fatalf("got %q", got)
	}
	if times, updates := r.PendingSize(); times != 1 || updates != 1 {
		t.Fatalf("pending %d times, %d updates", times, updates)
	}
	if p := r.Pending(); len(p) != 1 || p[0] != (PendingTime{Time: 4, Held: 1}) {
		t.Fatalf("pending %+v", p)
	}
}

func TestFinishAndInvalidMessagesAreRejected(t *testing.T) {
	r := New(0)
	for _, m := range []cdc.Message{cdc.NewFinish(3), upd(`"a"`, 1, 0), prog(5, 5), prog(5, 7, 9, 1), {}} {
		if _, _, err := r.Push(nil, &m, cdc.Pos{}); err == nil || IsViolation(err) {
			t.Errorf("%v: got %v, want a plain rejection", m, err)
		}
	}
}

func TestMemoryFollowsThePendingState(t *testing.T) {
	r := New(0)
	const n = 100000
	for tm := uint64(1); tm <= n; tm++ {
		pushAll(t, r, upd(`"k"`, tm, 1), prog(tm, tm+1, tm, 1))
	}
	if times, _ := r.PendingSize(); times != n {
		t.Fatalf("pending %d", times)
	}
	pushAll(t, r, prog(0, 1))
	if times, updates := r.PendingSize(); times != 0 || updates != 0 || len(r.cover.spans) > 1 || r.times.peakOver > 4096 {
		t.Fatalf("after release: %d times, %d updates, %d spans, peak %d", times, updates, len(r.cover.spans), r.times.peakOver)
	}
}

func ptr(m cdc.Message) *cdc.Message { return &m }

func TestEmittedCountsStayIntactAcrossManyReleases(t *testing.T) {
	// Times 1..n complete but wait for time 0; its statement then releases
	// them in one step, whose counts outgrow a block of the count slab.
	// Statements emitted before and after must keep their counts.
	const n = 3*countBlock + 17
	r := New(0)
	var msgs []cdc.Message
	msgs = append(msgs, upd(`"early"`, 0, 1), prog(0, 1, 0, 1)) // released at once
	for tm := uint64(2); tm <= n+1; tm++ {
		msgs = append(msgs, upd(`"k"`, tm, 1), prog(tm, tm+1, tm, 1))
	}
	out := pushAll(t, r, msgs...)
	if len(out) != 2 {
		t.Fatalf("%d records before time 1 completes, want 2", len(out))
	}
	first := out[1].Progress
	last := pushAll(t, r, upd(`"late"`, 1, 1), prog(1, 2, 1, 1))
	step := last[len(last)-1].Progress
	if len(step.Counts) != n+1 || step.Lower != 1 || step.Upper != n+2 {
		t.Fatalf("step [%d, %d) with %d counts, want [1, %d) with %d", step.Lower, step.Upper, len(step.Counts), n+2, n+1)
	}
	for i, c := range step.Counts {
		if c.Time != uint64(i+1) || c.Count != 1 {
			t.Fatalf("count %d is %+v", i, c)
		}
	}
	more := pushAll(t, r, upd(`"next"`, n+2, 1), prog(n+2, n+3, n+2, 1))
	if len(first.Counts) != 1 || first.Counts[0] != (cdc.Count{Time: 0, Count: 1}) ||
		step.Counts[0] != (cdc.Count{Time: 1, Count: 1}) || len(more) != 2 {
		t.Fatalf("earlier counts changed: %+v, %+v", first.Counts, step.Counts[0])
	}
}
