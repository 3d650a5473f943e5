package demangle

import (
	"bytes"
	"io"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"pgregory.net/rapid"
)

// fataler is what the checks need of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// encodedSizes returns the sizes of m in JSON (without the line end) and
// msgpack.
func encodedSizes(t fataler, m *cdc.Message) (jsonl, mp int) {
	t.Helper()
	b, err := cdc.AppendMsgpack(nil, m)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return len(cdc.AppendJSON(nil, m)), len(b)
}

// checkSplit checks that every message of out encodes within limit in
// both formats, and that out, with its consecutive statements merged
// wherever whole has no statement boundary, is whole: the split changes
// nothing else.
func checkSplit(t fataler, out, whole []cdc.Message, limit int) {
	t.Helper()
	for i := range out {
		if j, p := encodedSizes(t, &out[i]); j > limit || p > limit {
			t.Fatalf("message %d (%v) is %d bytes in JSON, %d in msgpack: over the %d-byte limit", i, out[i], j, p, limit)
		}
	}
	if got, want := render(mergeSplit(out, whole)), render(whole); got != want {
		t.Fatalf("split output, merged back:\n%s\nwant\n%s", got, want)
	}
}

// mergeSplit folds each statement that continues the previous one, with
// the continuation's updates moved before the merged statement, wherever
// whole has no statement boundary.
func mergeSplit(out, whole []cdc.Message) []cdc.Message {
	var res []cdc.Message
	var held []cdc.Message // updates after the last statement
	for _, m := range out {
		if m.Kind == cdc.KindUpdate {
			held = append(held, m)
			continue
		}
		k := len(res) - 1
		if k >= 0 && res[k].Kind == cdc.KindProgress && !res[k].Progress.Unbounded &&
			res[k].Progress.Upper == m.Progress.Lower && !isBoundary(whole, m.Progress.Lower) {
			prev := res[k]
			prev.Progress.Upper, prev.Progress.Unbounded = m.Progress.Upper, m.Progress.Unbounded
			prev.Progress.Counts = append(append([]cdc.Count(nil), prev.Progress.Counts...), m.Progress.Counts...)
			res = append(append(res[:k], held...), prev)
		} else {
			res = append(append(res, held...), m)
		}
		held = nil
	}
	return append(res, held...)
}

// isBoundary reports whether some statement of whole ends at t.
func isBoundary(whole []cdc.Message, t uint64) bool {
	for _, m := range whole {
		if m.Kind == cdc.KindProgress && !m.Progress.Unbounded && m.Progress.Upper == t {
			return true
		}
	}
	return false
}

// oneBigRelease is updates at times base to base+n-1, one each, then
// bigReleaseStatements.
func oneBigRelease(base uint64, n int) []cdc.Message {
	msgs := make([]cdc.Message, 0, n+n/1000+2)
	for i := 0; i < n; i++ {
		msgs = append(msgs, cdc.NewUpdate([]byte(`"k"`), base+uint64(i), 1))
	}
	return append(msgs, bigReleaseStatements(base, n)...)
}

// bigReleaseStatements are the statements for one update at each time
// from base to base+n-1, the one that covers [0, base] last: pushed after
// the updates, they release all of them in one step.
func bigReleaseStatements(base uint64, n int) []cdc.Message {
	var msgs []cdc.Message
	for lo := 1; lo < n; lo += 1000 {
		hi := min(n, lo+1000)
		counts := make([]cdc.Count, 0, hi-lo)
		for i := lo; i < hi; i++ {
			counts = append(counts, cdc.Count{Time: base + uint64(i), Count: 1})
		}
		msgs = append(msgs, cdc.NewProgress(base+uint64(lo), base+uint64(hi), counts...))
	}
	return append(msgs, cdc.NewProgress(0, base+1, cdc.Count{Time: base, Count: 1}))
}

func pushWithLimit(t testing.TB, limit int, msgs []cdc.Message) []cdc.Message {
	t.Helper()
	r := New(0)
	r.maxMessage = limit
	var out []cdc.Message
	for i := range msgs {
		var err error
		if out, _, err = r.Push(out, &msgs[i], cdc.Pos{Line: int64(i + 1)}); err != nil {
			t.Fatalf("push %v: %v", msgs[i], err)
		}
	}
	return out
}

func TestAReleaseTooLongForOneMessageIsSplitIntoConsecutiveStatements(t *testing.T) {
	msgs := oneBigRelease(1000, 100)
	whole := pushWithLimit(t, 0, msgs)
	if n := len(whole); n != 101 || whole[100].Kind != cdc.KindProgress {
		t.Fatalf("without a low limit: %d messages, want 100 updates and one statement", n)
	}
	const limit = 600
	out := pushWithLimit(t, limit, msgs)
	checkSplit(t, out, whole, limit)
	statements := 0
	for _, m := range out {
		if m.Kind == cdc.KindProgress {
			statements++
		}
	}
	if statements < 5 {
		t.Fatalf("%d statements for 100 counts of about 30 bytes under a %d-byte limit", statements, limit)
	}
	if again := pushWithLimit(t, limit, msgs); render(again) != render(out) {
		t.Fatal("the split differs from run to run")
	}
}

// The real limit: a release of 450,000 times with 20-digit times (40
// bytes a count in JSON, 18 MB in one statement) comes out as statements
// that cdclog's own Reader takes back, in both formats.
func TestAReleaseBeyondTheRealMessageLimitReadsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("2.5 CPU-seconds, much more under the race detector")
	}
	const n = 450_000
	const base = 10_000_000_000_000_000_000
	r := New(0)
	for i := uint64(0); i < n; i++ {
		m := cdc.NewUpdate([]byte(`"k"`), base+i, 1)
		if _, _, err := r.Push(nil, &m, cdc.Pos{}); err != nil {
			t.Fatal(err)
		}
	}
	stmts := bigReleaseStatements(base, n)
	for _, m := range stmts[:len(stmts)-1] {
		if _, _, err := r.Push(nil, &m, cdc.Pos{}); err != nil {
			t.Fatal(err)
		}
	}
	if f, _ := r.Frontier(); f != 0 {
		t.Fatalf("released early, frontier %d", f)
	}
	out, _, err := r.Push(make([]cdc.Message, 0, n+8), &stmts[len(stmts)-1], cdc.Pos{})
	if err != nil {
		t.Fatal(err)
	}
	var statements []cdc.Message
	for _, m := range out {
		if m.Kind == cdc.KindProgress {
			statements = append(statements, m)
		}
	}
	if len(statements) < 2 || len(out) != n+len(statements) {
		t.Fatalf("%d messages, %d statements", len(out), len(statements))
	}
	for _, f := range []cdc.Format{cdc.JSONL, cdc.Msgpack} {
		var buf bytes.Buffer
		w := cdc.NewWriter(&buf, f)
		for i := range statements {
			if err := w.Write(&statements[i]); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
		r := cdc.NewReader(&buf, f, "out")
		var m cdc.Message
		read := 0
		for ; ; read++ {
			err := r.Next(&m)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: cdclog cannot read its own output: %v", f, err)
			}
			if m.Progress.Lower != statements[read].Progress.Lower || len(m.Progress.Counts) != len(statements[read].Progress.Counts) {
				t.Fatalf("%s: statement %d reads back as %v", f, read, m)
			}
		}
		if read != len(statements) {
			t.Fatalf("%s: %d of %d statements read back", f, read, len(statements))
		}
	}
	if j, _ := encodedSizes(t, &statements[0]); j < cdc.MaxMessageSize-100 {
		t.Errorf("the first statement is %d bytes: it should be cut at the limit, %d", j, cdc.MaxMessageSize)
	}
}

// Whatever the stream and the limit, the split output is the unsplit one
// cut at points where a statement would be too long, and nothing else.
func TestSplitOutputIsTheWholeOutputCut(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := genScenario(rt)
		msgs := mangle(rt, s.msgs, "m")
		limit := rapid.IntRange(150, 400).Draw(rt, "limit")
		whole := pushWithLimit(t, 0, msgs)
		out := pushWithLimit(t, limit, msgs)
		checkClean(rt, out)
		checkSplit(rt, out, whole, limit)
	})
}
