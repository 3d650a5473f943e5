package demangle

import (
	"math"
	"slices"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"pgregory.net/rapid"
)

// shift moves every time in msgs up by off, for a stream over [0, n)
// moved to the end of the time range. An upper that would pass the last
// time, math.MaxUint64, becomes unbounded (it is the end of the range);
// a statement that would start past it covers nothing and is dropped.
func shift(msgs []cdc.Message, off uint64) []cdc.Message {
	var out []cdc.Message
	for _, m := range msgs {
		switch m.Kind {
		case cdc.KindUpdate:
			m.Update.Time += off
		case cdc.KindProgress:
			p := m.Progress
			if p.Lower > math.MaxUint64-off {
				continue
			}
			p.Lower += off
			if !p.Unbounded {
				if p.Upper-1 >= math.MaxUint64-off {
					p.Unbounded, p.Upper = true, 0
				} else {
					p.Upper += off
				}
			}
			p.Counts = slices.Clone(p.Counts)
			for j := range p.Counts {
				p.Counts[j].Time += off
			}
			m.Progress = p
		}
		out = append(out, m)
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
		pf, pdone := frontierOf(plain, 0)

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
		if start > 0 {
			checkClean(t, append([]cdc.Message{cdc.NewProgress(0, start)}, got...))
		} else {
			checkClean(t, got)
		}
		gf, gdone := frontierOf(got, start)
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

// frontierOf returns the frontier that a clean stream's progress
// statements reach from start, and whether it is the end.
func frontierOf(out []cdc.Message, start uint64) (uint64, bool) {
	f := start
	for _, m := range out {
		if m.Kind != cdc.KindProgress {
			continue
		}
		if m.Progress.Unbounded {
			return f, true
		}
		f = m.Progress.Upper
	}
	return f, false
}
