package demangle

import (
	"math"
	"slices"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/streamgen"
	"pgregory.net/rapid"
)

// shift moves every time in msgs up by off (streamgen.Shift), dropping
// the statements that would start past the last time.
func shift(msgs []cdc.Message, off uint64) []cdc.Message {
	var out []cdc.Message
	for _, m := range msgs {
		if streamgen.Shift(&m, off) {
			out = append(out, m)
		}
	}
	return out
}

// TestTheLastTimesOfTheRangeBehaveLikeAnyOther moves a mangled stream to
// the end of the time range, so that its last time is math.MaxUint64 or
// the one before, and checks that the receiver (in memory, and with a
// store under any budget) releases the same updates at the moved times:
// the time index's window, the coverage and the horizon all reach the
// last time. A time index that lost the state of time math.MaxUint64
// when its window slid to the end once held that time back for ever.
func TestTheLastTimesOfTheRangeBehaveLikeAnyOther(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		msgs := mangle(t, s.msgs, "m")
		n := uint64(1)
		for _, m := range s.msgs {
			n = max(n, m.Progress.Lower, m.Update.Time+1)
			if m.Kind == cdc.KindProgress && !m.Progress.Unbounded {
				n = max(n, m.Progress.Upper)
			}
		}
		// n-1 becomes the last time, or the one before it.
		off := math.MaxUint64 - n + rapid.Uint64Range(0, 1).Draw(t, "end")
		plain, _ := runAll(t, msgs)
		_, pf, pdone := checkClean(t, plain)

		// Either start at off, or at 0 with a statement over [0, off)
		// arriving anywhere in the stream: then the frontier jumps, and
		// what arrived before it did is held far beyond it.
		moved := shift(msgs, off)
		start := off
		if rapid.Bool().Draw(t, "jump") {
			start = 0
			at := rapid.IntRange(0, len(moved)).Draw(t, "jump-at")
			moved = slices.Insert(moved, at, cdc.NewProgress(0, off))
		}
		r := New(start)
		// A small message limit cuts the released statements, whose
		// bounds and counts are 20 digits long here.
		r.maxMessage = rapid.SampledFrom([]int{0, 150, 300}).Draw(t, "limit")
		if rapid.Bool().Draw(t, "store") {
			r.UseStore(&MemStore{}, rapid.Int64Range(1, 4000).Draw(t, "budget"))
			r.window = rapid.SampledFrom([]uint64{0, 1, 2, 3, loadWindow}).Draw(t, "window")
		}
		var got []cdc.Message
		for i := range moved {
			var err error
			if got, _, err = r.Push(got, &moved[i], cdc.Pos{Line: int64(i + 1)}); err != nil {
				t.Fatalf("push %d %v: %v", i, moved[i], err)
			}
		}
		// The clean stream's invariants, from frontier 0: a statement
		// over [0, start) comes first when it starts above.
		checked := got
		if start > 0 {
			checked = append([]cdc.Message{cdc.NewProgress(0, start)}, got...)
		}
		_, gf, gdone := checkClean(t, checked)
		// The moved stream is done when the original reached the time
		// that became one past the last.
		wantDone := pdone || (pf > math.MaxUint64-off)
		if gdone != wantDone || (!gdone && max(gf, off) != pf+off) {
			t.Fatalf("moved by %d: frontier %d (done %v), want %d (done %v) from the original's %d (done %v)",
				off, gf, gdone, pf+off, wantDone, pf, pdone)
		}
		if rf, rdone := r.Frontier(); rdone != gdone || (!rdone && rf != gf) {
			t.Fatalf("receiver frontier %d (done %v), output says %d (done %v)", rf, rdone, gf, gdone)
		}
		want := updatesOnly(shift(plain, off))
		if g := updatesOnly(got); !slices.EqualFunc(g, want, func(x, y cdc.Message) bool {
			return compareUpdates(&x, &y) == 0 && x.Update.Diff == y.Update.Diff
		}) {
			t.Fatalf("moved by %d:\n got %v\nwant %v", off, g, want)
		}
	})
}
