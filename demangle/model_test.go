package demangle

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"pgregory.net/rapid"
)

// scenario is a consolidated stream generated for a property test, with what
// a correct receiver must make of it.
type scenario struct {
	msgs []cdc.Message // distinct statements, in producer order
	// want maps each time expected in the output to its updates.
	want map[uint64][]cdc.Message
	// frontier is the expected final frontier; done when every time is
	// complete.
	frontier uint64
	done     bool
}

// genScenario draws a stream over times [0, n): updates for a few keys,
// progress statements tiling the range (some re-batched and overlapping),
// possibly a withheld statement or update, possibly a final unbounded
// statement.
func genScenario(t *rapid.T) scenario {
	n := rapid.Uint64Range(1, 40).Draw(t, "times")
	keys := rapid.IntRange(1, 5).Draw(t, "keys")
	updates := map[uint64][]cdc.Message{}
	for tm := uint64(0); tm < n; tm++ {
		for k := 0; k < keys; k++ {
			d := rapid.SampledFrom([]int64{0, 0, 0, 1, -1, 2, -7}).Draw(t, "diff")
			if d != 0 {
				data := []byte(fmt.Sprintf(`{"k":%d}`, k))
				updates[tm] = append(updates[tm], cdc.NewUpdate(data, tm, d))
			}
		}
	}
	var stmts []cdc.Message
	for lo := uint64(0); lo < n; {
		hi := min(n, lo+rapid.Uint64Range(1, 6).Draw(t, "segment"))
		stmts = append(stmts, progressFor(updates, lo, hi))
		if rapid.IntRange(0, 3).Draw(t, "rebatch") == 0 && hi < n {
			// A restarted producer re-batches: one statement over this
			// segment and the next time.
			stmts = append(stmts, progressFor(updates, lo, hi+1))
		}
		lo = hi
	}
	unbounded := rapid.Bool().Draw(t, "unbounded")
	if unbounded {
		stmts = append(stmts, cdc.Message{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: n, Unbounded: true}})
	}
	s := scenario{want: map[uint64][]cdc.Message{}}
	// Optionally withhold one statement and one update.
	withheldStmt := -1
	if rapid.IntRange(0, 3).Draw(t, "withhold-stmt") == 0 {
		withheldStmt = rapid.IntRange(0, len(stmts)-1).Draw(t, "which-stmt")
	}
	var withheldUpd *cdc.Message
	for tm := uint64(0); tm < n; tm++ {
		for _, u := range updates[tm] {
			s.msgs = append(s.msgs, u)
		}
	}
	if len(s.msgs) > 0 && rapid.IntRange(0, 3).Draw(t, "withhold-update") == 0 {
		i := rapid.IntRange(0, len(s.msgs)-1).Draw(t, "which-update")
		withheldUpd = &s.msgs[i]
		s.msgs = slices.Delete(slices.Clone(s.msgs), i, i+1)
	}
	for i, m := range stmts {
		if i != withheldStmt {
			s.msgs = append(s.msgs, m)
		}
	}
	// The model: the frontier stops at the first time not covered by a
	// delivered statement, or covered but missing an update.
	covered := func(tm uint64) bool {
		for i, m := range stmts {
			if i != withheldStmt && m.Progress.Covers(tm) {
				return true
			}
		}
		return false
	}
	s.frontier = 0
	for ; s.frontier < n; s.frontier++ {
		if !covered(s.frontier) || (withheldUpd != nil && withheldUpd.Update.Time == s.frontier) {
			break
		}
		s.want[s.frontier] = updates[s.frontier]
	}
	if s.frontier == n && covered(n) && unbounded {
		s.done = true
		s.frontier = math.MaxUint64
	}
	return s
}

// progressFor states the counts of [lo, hi).
func progressFor(updates map[uint64][]cdc.Message, lo, hi uint64) cdc.Message {
	var counts []cdc.Count
	for tm := lo; tm < hi; tm++ {
		if c := len(updates[tm]); c > 0 {
			counts = append(counts, cdc.Count{Time: tm, Count: uint64(c)})
		}
	}
	return cdc.NewProgress(lo, hi, counts...)
}

// mangle duplicates and shuffles msgs.
func mangle(t *rapid.T, msgs []cdc.Message, label string) []cdc.Message {
	var out []cdc.Message
	for _, m := range msgs {
		for c := rapid.IntRange(1, 3).Draw(t, label+"-copies"); c > 0; c-- {
			out = append(out, m)
		}
	}
	return rapid.Permutation(out).Draw(t, label+"-order")
}

// runAll pushes msgs into a fresh receiver and returns its output.
func runAll(tb interface{ Fatalf(string, ...any) }, msgs []cdc.Message) ([]cdc.Message, *Receiver) {
	r := New(0)
	var out []cdc.Message
	for i := range msgs {
		var err error
		out, _, err = r.Push(out, &msgs[i], cdc.Pos{Line: int64(i + 1)})
		if err != nil {
			tb.Fatalf("push %d %v: %v", i, msgs[i], err)
		}
	}
	return out, r
}

// checkClean checks the invariants of a clean stream and returns its
// updates by time and the frontier its progress statements reach.
func checkClean(t *rapid.T, out []cdc.Message) (map[uint64][]cdc.Message, uint64, bool) {
	got := map[uint64][]cdc.Message{}
	var f uint64
	done := false
	var pending []cdc.Message
	for _, m := range out {
		switch m.Kind {
		case cdc.KindUpdate:
			if done || m.Update.Time < f {
				t.Fatalf("update %v at or after frontier %d", m, f)
			}
			if n := len(pending); n > 0 && compareUpdates(&pending[n-1], &m) >= 0 {
				t.Fatalf("updates out of canonical order: %v then %v", pending[n-1], m)
			}
			pending = append(pending, m)
		case cdc.KindProgress:
			p := m.Progress
			if p.Lower != f || done {
				t.Fatalf("progress %v does not start at frontier %d", m, f)
			}
			counts := map[uint64]uint64{}
			for _, u := range pending {
				if !p.Covers(u.Update.Time) {
					t.Fatalf("update %v outside the progress that releases it %v", u, m)
				}
				counts[u.Update.Time]++
				got[u.Update.Time] = append(got[u.Update.Time], u)
			}
			if len(counts) != len(p.Counts) {
				t.Fatalf("progress %v lists %d counts, updates give %d", m, len(p.Counts), len(counts))
			}
			for _, c := range p.Counts {
				if counts[c.Time] != c.Count {
					t.Fatalf("progress %v: time %d has %d updates", m, c.Time, counts[c.Time])
				}
			}
			pending = nil
			f, done = p.Upper, p.Unbounded
		}
	}
	if len(pending) > 0 {
		t.Fatalf("%d updates emitted without a progress statement", len(pending))
	}
	return got, f, done
}

func compareUpdates(a, b *cdc.Message) int {
	if a.Update.Time != b.Update.Time {
		if a.Update.Time < b.Update.Time {
			return -1
		}
		return 1
	}
	if c := bytes.Compare(a.Update.Data, b.Update.Data); c != 0 {
		return c
	}
	return int(a.Update.Diff - b.Update.Diff)
}

func updatesOnly(out []cdc.Message) []cdc.Message {
	var u []cdc.Message
	for _, m := range out {
		if m.Kind == cdc.KindUpdate {
			u = append(u, m)
		}
	}
	return u
}

func TestCleanOutputCarriesExactlyTheInputWhateverTheMangling(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		a, ra := runAll(t, mangle(t, s.msgs, "a"))
		b, _ := runAll(t, mangle(t, s.msgs, "b"))
		got, f, done := checkClean(t, a)
		checkClean(t, b)
		if done != s.done || (!done && f != s.frontier) {
			t.Fatalf("output frontier %d (done %v), want %d (done %v)", f, done, s.frontier, s.done)
		}
		if rf, rdone := ra.Frontier(); rf != s.frontier || rdone != s.done {
			t.Fatalf("receiver frontier %d (done %v), want %d (done %v)", rf, rdone, s.frontier, s.done)
		}
		for tm, want := range s.want {
			if !sameUpdates(got[tm], want) {
				t.Fatalf("time %d: got %v, want %v", tm, got[tm], want)
			}
		}
		for tm := range got {
			if _, ok := s.want[tm]; !ok {
				t.Fatalf("time %d emitted, want it pending", tm)
			}
		}
		ua, ub := updatesOnly(a), updatesOnly(b)
		if !slices.EqualFunc(ua, ub, func(x, y cdc.Message) bool { return compareUpdates(&x, &y) == 0 }) {
			t.Fatalf("update lines depend on the mangling:\n%v\n%v", ua, ub)
		}
	})
}

func sameUpdates(got, want []cdc.Message) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g cdc.Message) bool { return compareUpdates(&g, &w) == 0 && g.Update.Diff == w.Update.Diff }) {
			return false
		}
	}
	return true
}

func TestSnapshotRestoreAnywhereGivesTheSameOutput(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		msgs := mangle(t, s.msgs, "m")
		want, _ := runAll(t, msgs)
		cut := rapid.IntRange(0, len(msgs)).Draw(t, "cut")
		r := New(0)
		var got []cdc.Message
		for i := range msgs {
			if i == cut {
				b, err := r.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				r = &Receiver{}
				if err := r.UnmarshalBinary(b); err != nil {
					t.Fatal(err)
				}
				b2, _ := r.MarshalBinary()
				if !bytes.Equal(b, b2) {
					t.Fatal("snapshot of a restored receiver differs")
				}
			}
			got, _, _ = r.Push(got, &msgs[i], cdc.Pos{})
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("restored at %d:\n got %v\nwant %v", cut, got, want)
		}
	})
}

// A regression that TestCleanOutputCarriesExactlyTheInputWhateverTheMangling
// once found (its rapid fail file, from rapid v0.4): with one of time 4's
// two updates withheld and overlapping statements covering 0 to 4, a
// receiver released time 4 with one update under count 2. The frontier
// must stop at 4. testdata/receiver/coverage has the same script.
func TestTimeWithAWithheldUpdateStaysPending(t *testing.T) {
	msgs := []cdc.Message{
		upd(`{"k":1}`, 4, -7),
		prog(0, 3),
		prog(2, 5, 4, 2),
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {1, 2, 0}} {
		r := New(0)
		var out []cdc.Message
		for _, i := range order {
			var err error
			if out, _, err = r.Push(out, &msgs[i], cdc.Pos{Line: int64(i + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		if f, _ := r.Frontier(); f != 4 || len(updatesOnly(out)) != 0 {
			t.Errorf("order %v: frontier %d, output %s; want frontier 4 and no update released", order, f, render(out))
		}
		if s := r.Stuck(); !s.Covered || s.Held != 1 || s.Expected != 2 {
			t.Errorf("order %v: stuck %v", order, s)
		}
	}
}
