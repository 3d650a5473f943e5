package demangle

import (
	"fmt"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"pgregory.net/rapid"
)

// withViolations adds to msgs a few messages that contradict them:
// another diff for an update, another count for a time, an update at a
// time the stream gives no update.
func withViolations(t *rapid.T, msgs []cdc.Message) []cdc.Message {
	out := append([]cdc.Message(nil), msgs...)
	for v := rapid.IntRange(0, 3).Draw(t, "violations"); v > 0 && len(msgs) > 0; v-- {
		m := msgs[rapid.IntRange(0, len(msgs)-1).Draw(t, "victim")]
		switch m.Kind {
		case cdc.KindUpdate:
			if rapid.Bool().Draw(t, "flip") {
				m.Update.Diff = -m.Update.Diff
			} else {
				m.Update.Data = []byte(`"intruder"`)
			}
		case cdc.KindProgress:
			p := m.Progress
			p.Counts = append([]cdc.Count(nil), p.Counts...)
			if len(p.Counts) > 0 {
				p.Counts[0].Count++
			} else if !p.Unbounded {
				p.Counts = []cdc.Count{{Time: p.Lower, Count: 1}}
			}
			m.Progress = p
		}
		out = append(out, m)
	}
	return out
}

// runRecorded pushes msgs into r, shedding whenever it asks to, and
// returns the output and every violation reported (by the push or
// deferred), as "message at position" strings.
func runRecorded(t *rapid.T, r *Receiver, msgs []cdc.Message) ([]cdc.Message, map[string]bool) {
	var out []cdc.Message
	reported := map[string]bool{}
	note := func(v *ViolationError) { reported[fmt.Sprintf("%s at %s", v.Msg, v.At)] = true }
	for i := range msgs {
		var err error
		out, _, err = r.Push(out, &msgs[i], cdc.Pos{Line: int64(i + 1)})
		var v *ViolationError
		switch {
		case err == nil:
		case asViolation(err, &v):
			note(v)
		default:
			t.Fatalf("push %d %v: %v", i, msgs[i], err)
		}
		for _, v := range r.Deferred() {
			if !v.Deferred {
				t.Fatalf("a deferred violation not marked so: %v", v)
			}
			note(v)
		}
		if out, err = drainRelease(r, out); err != nil {
			t.Fatalf("continue after push %d: %v", i, err)
		}
		if r.NeedShed() {
			if err := r.Shed(); err != nil {
				t.Fatalf("shed: %v", err)
			}
		}
	}
	return out, reported
}

// TestAStoreAndAnyBudgetGiveTheSameOutput is the property behind the
// horizon: whatever the budget (so whatever is held in memory and what
// in the store, and when it moves between them) and whatever the size of
// the windows loaded back, the output is byte for byte that of a receiver
// holding everything in memory, for any mangled stream, violations
// included; every violation reported names a message that the in-memory
// receiver reports too.
func TestAStoreAndAnyBudgetGiveTheSameOutput(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		msgs := mangle(t, withViolations(t, spread(s.msgs, rapid.Uint64Range(1, 5000).Draw(t, "spread"))), "m")
		plain, want := runRecorded(t, New(0), msgs)

		r := New(0)
		r.UseStore(&MemStore{}, rapid.Int64Range(1, 4000).Draw(t, "budget"))
		r.window = rapid.SampledFrom([]uint64{0, 1, 2, 3, 5, 8, loadWindow}).Draw(t, "window") // 0: fitted to the budget
		got, reported := runRecorded(t, r, msgs)
		if a, b := renderJSON(plain), renderJSON(got); a != b {
			t.Fatalf("output differs:\n in memory: %s\nwith store: %s", a, b)
		}
		for v := range reported {
			if !want[v] {
				t.Fatalf("reported %s, which the in-memory receiver does not", v)
			}
		}
	})
}

// spread multiplies every time in msgs by k, so that times are sparse:
// a statement [lo, hi) becomes [lo*k, hi*k), whose new times have no
// update.
func spread(msgs []cdc.Message, k uint64) []cdc.Message {
	out := make([]cdc.Message, len(msgs))
	for i, m := range msgs {
		switch m.Kind {
		case cdc.KindUpdate:
			m.Update.Time *= k
		case cdc.KindProgress:
			p := m.Progress
			p.Lower *= k
			if !p.Unbounded {
				p.Upper *= k
			}
			p.Counts = append([]cdc.Count(nil), p.Counts...)
			for j := range p.Counts {
				p.Counts[j].Time *= k
			}
			m.Progress = p
		}
		out[i] = m
	}
	return out
}

func asViolation(err error, v **ViolationError) bool {
	ve, ok := err.(*ViolationError)
	if ok {
		*v = ve
	}
	return ok
}

func renderJSON(out []cdc.Message) string {
	var b []byte
	for i := range out {
		b = cdc.AppendJSON(b, &out[i])
		b = append(b, '\n')
	}
	return string(b)
}

func TestALoadWindowShrinksWhenItTookMoreThanAQuarterOfTheBudgetAndGrowsBackWhenLittle(t *testing.T) {
	const budget = 1 << 20
	for _, c := range []struct {
		w      uint64
		loaded int64
		want   uint64
	}{
		{loadWindow, budget, loadWindow / 8},     // the whole budget: to an eighth of it
		{loadWindow, budget / 2, loadWindow / 4}, // half: a quarter of the window
		{100, budget / 8, 100},                   // within bounds: unchanged
		{100, budget / 32, 200},                  // little: doubled
		{loadWindow, 0, loadWindow},              // never past loadWindow
		{1, budget * 8, 1},                       // never below one time
		{100, budget, 100 / 8},
	} {
		if got := fitWindow(c.w, c.loaded, budget); got != c.want {
			t.Errorf("fitWindow(%d, %d) = %d, want %d", c.w, c.loaded, got, c.want)
		}
	}
}

func TestTheFirstLoadAfterAShedHoldsAboutAnEighthOfTheBudget(t *testing.T) {
	const budget = 8 << 20
	times := []timeBytes{{1, 64 << 10}, {2, 64 << 10}, {3, 64 << 10}, {4, 64 << 10}}
	if got, want := estimateWindow(times, budget), uint64(16); got != want { // 1 MiB at 64 KiB a time
		t.Errorf("estimateWindow = %d, want %d", got, want)
	}
	if got := estimateWindow(nil, budget); got != loadWindow {
		t.Errorf("with nothing held: %d, want loadWindow", got)
	}
	if got := estimateWindow([]timeBytes{{1, budget}}, budget); got != 1 {
		t.Errorf("one time past the budget: %d, want 1", got)
	}
}

// TestScanPendingListsWhatPendingListsWindowByWindow: whatever the budget
// and the windows, a receiver with a store scanned with ScanPending lists
// the same pending times, counts and held updates as a receiver holding
// everything in memory lists with Pending, for any prefix of a mangled
// stream (so that something is pending), violations included.
func TestScanPendingListsWhatPendingListsWindowByWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		msgs := mangle(t, withViolations(t, spread(s.msgs, rapid.Uint64Range(1, 5000).Draw(t, "spread"))), "m")
		msgs = msgs[:rapid.IntRange(0, len(msgs)).Draw(t, "prefix")]
		plain := New(0)
		runRecorded(t, plain, msgs)
		want := plain.Pending()

		r := New(0)
		r.UseStore(&MemStore{}, rapid.Int64Range(1, 4000).Draw(t, "budget"))
		r.window = rapid.SampledFrom([]uint64{0, 1, 2, 3, 5, 8, loadWindow}).Draw(t, "window")
		runRecorded(t, r, msgs)
		var got []PendingTime
		if err := r.ScanPending(func(p *PendingTime) error { got = append(got, *p); return nil }); err != nil {
			t.Fatalf("ScanPending: %v", err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ScanPending listed\n%v\nwhere Pending, everything in memory, lists\n%v", got, want)
		}
	})
}

func TestScanPendingStopsWithTheErrorOfYield(t *testing.T) {
	r := New(0)
	r.UseStore(&MemStore{}, 1)
	for tm := range uint64(20) {
		if _, _, err := r.Push(nil, &cdc.Message{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(`"a"`), Time: tm, Diff: 1}}, cdc.Pos{}); err != nil {
			t.Fatal(err)
		}
		if r.NeedShed() {
			if err := r.Shed(); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop := fmt.Errorf("enough")
	n := 0
	err := r.ScanPending(func(*PendingTime) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("ScanPending = %v after %d times, want %v after 3", err, n, stop)
	}
}
