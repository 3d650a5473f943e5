package demangle

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"pgregory.net/rapid"
)

// drainRelease calls Continue until no release is owed, checking on the
// way that each call appends at most the receiver's limit (at least one
// record) and that Frontier is where the last statement emitted ends.
func drainRelease(r *Receiver, out []cdc.Message) ([]cdc.Message, error) {
	for r.Releasing() {
		if f, done := r.Frontier(); done || f != emittedFrontier(out, f) {
			return out, fmt.Errorf("while releasing, Frontier is %d (done %v), the output's last statement ends at %d", f, done, emittedFrontier(out, f))
		}
		before := len(out)
		var err error
		if out, err = r.Continue(out); err != nil {
			return out, err
		}
		if n := len(out) - before; n == 0 || (r.limit.records > 0 && n > r.limit.records) {
			return out, fmt.Errorf("Continue appended %d records, limit %d", n, r.limit.records)
		}
	}
	return out, nil
}

// emittedFrontier returns the upper bound of the last statement in out,
// or def when there is none.
func emittedFrontier(out []cdc.Message, def uint64) uint64 {
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Kind == cdc.KindProgress {
			return out[i].Progress.Upper
		}
	}
	return def
}

// TestAnOutputLimitReleasesTheSameRecordsInParts: whatever the limit, in
// records or bytes, with or without a store, the parts that Push and
// Continue append are, end to end, the output of a receiver without one.
func TestAnOutputLimitReleasesTheSameRecordsInParts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		msgs := mangle(t, withViolations(t, spread(s.msgs, rapid.Uint64Range(1, 50).Draw(t, "spread"))), "m")
		plain, _ := runRecorded(t, New(0), msgs)

		r := New(0)
		if rapid.Bool().Draw(t, "store") {
			r.UseStore(&MemStore{}, rapid.Int64Range(1, 4000).Draw(t, "budget"))
		}
		r.SetOutputLimit(rapid.IntRange(1, 6).Draw(t, "records"), rapid.IntRange(0, 40).Draw(t, "bytes"))
		got, _ := runRecorded(t, r, msgs)
		if a, b := renderJSON(plain), renderJSON(got); a != b {
			t.Fatalf("output differs:\n     whole: %s\n  in parts: %s", a, b)
		}
	})
}

// bigTime returns a stream of one time, 7, holding n updates (a third of
// them sent twice), shuffled, its statement in the middle, and a
// statement covering the times before it.
func bigTime(n int, seed uint64) []cdc.Message {
	rng := rand.New(rand.NewPCG(seed, 1))
	var msgs []cdc.Message
	for k := range n {
		m := cdc.NewUpdate([]byte(fmt.Sprintf(`{"id":%d,"name":"row-%d"}`, k, k%97)), 7, int64(1+k%3))
		msgs = append(msgs, m)
		if rng.IntN(3) == 0 {
			msgs = append(msgs, m)
		}
	}
	rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	mid := len(msgs) / 2
	stmt := cdc.Message{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: 7, Upper: 8, Counts: []cdc.Count{{Time: 7, Count: uint64(n)}}}}
	before := cdc.Message{Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: 0, Upper: 7}}
	return append(append(append([]cdc.Message{before}, msgs[:mid]...), stmt), msgs[mid:]...)
}

func TestABigTimeReleasedInPartsIsTheWholeReleaseInCanonicalOrder(t *testing.T) {
	msgs := bigTime(3000, 1)
	whole := pushAll(t, New(0), msgs...)
	if len(whole) != 3000+2 {
		t.Fatalf("released %d records, want 3002", len(whole))
	}
	for _, limit := range []int{1, 7, 64, 999, 2999, 3000, 5000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			r := New(0)
			r.SetOutputLimit(limit, 0)
			var out []cdc.Message
			for i := range msgs {
				var err error
				if out, _, err = r.Push(out, &msgs[i], cdc.Pos{Source: "in", Line: int64(i + 1)}); err != nil {
					t.Fatal(err)
				}
				if out, err = drainRelease(r, out); err != nil {
					t.Fatal(err)
				}
			}
			if a, b := renderJSON(whole), renderJSON(out); a != b {
				t.Fatalf("the release in parts of %d differs from the whole one", limit)
			}
		})
	}
}

func TestAPushWhileAReleaseIsOwedFinishesItFirst(t *testing.T) {
	msgs := bigTime(500, 2)
	later := []cdc.Message{cdc.NewUpdate([]byte(`"late"`), 8, 1), {Kind: cdc.KindProgress, Progress: cdc.Progress{Lower: 8, Upper: 9, Counts: []cdc.Count{{Time: 8, Count: 1}}}}}
	whole := pushAll(t, New(0), append(append([]cdc.Message(nil), msgs...), later...)...)
	r := New(0)
	r.SetOutputLimit(10, 0)
	var out []cdc.Message
	// The pushes after the one that completes the time are duplicates,
	// pushed while its release is owed.
	owed := false
	for i := range msgs {
		var err error
		if out, _, err = r.Push(out, &msgs[i], cdc.Pos{Source: "in", Line: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		owed = owed || r.Releasing()
	}
	if !owed {
		t.Fatal("a release of 500 updates under a limit of 10 records was never owed")
	}
	r.SetOutputLimit(0, 0)
	for i := range later {
		var err error
		if out, _, err = r.Push(out, &later[i], cdc.Pos{Line: int64(len(msgs) + i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := renderJSON(whole), renderJSON(out); a != b {
		t.Fatal("pushing while a release was owed changed the output")
	}
	if _, err := r.MarshalBinary(); err != nil {
		t.Fatalf("snapshot once the release is done: %v", err)
	}
}

// TestStuckSaysATimeIsBeingReleased: while a release is owed, Stuck names
// the time being released, how many of its updates are out, and that it
// waits for no message; once done, it is back to what the frontier waits
// for.
func TestStuckSaysATimeIsBeingReleased(t *testing.T) {
	msgs := bigTime(100, 3)
	r := New(0)
	r.SetOutputLimit(30, 0)
	var out []cdc.Message
	var st Stuck
	for i := range msgs {
		var err error
		if out, _, err = r.Push(out, &msgs[i], cdc.Pos{}); err != nil {
			t.Fatal(err)
		}
		if r.Releasing() {
			st = r.Stuck()
			break
		}
	}
	if !st.Releasing || st.Time != 7 || !st.Covered || st.Held != 100 || st.Expected != 100 || st.Emitted != 30 {
		t.Fatalf("while releasing: %+v; want time 7 releasing, 30 of 100 emitted", st)
	}
	if got, want := st.String(), "time 7 is being released: 30 of its 100 updates emitted, the rest owed"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if _, err := drainRelease(r, out); err != nil {
		t.Fatal(err)
	}
	if st := r.Stuck(); st.Releasing || st.Time != 8 || st.Covered {
		t.Errorf("after the release: %+v; want time 8 waiting for progress", st)
	}
}

// TestAByteLimitStopsAnOrdinaryTimePartWay: a time of a few updates is
// released whole in one call only when its data fit the byte limit;
// otherwise the call stops after the record that reaches the limit and
// owes the rest.
func TestAByteLimitStopsAnOrdinaryTimePartWay(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes int
		want  int // records the completing push appends
	}{
		{"fits", 4*18 + 1, 5}, // the four updates and the statement
		{"reached by the last", 4 * 18, 4},
		{"reached by the third", 40, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(0)
			r.SetOutputLimit(100, tc.bytes)
			var out []cdc.Message
			for _, d := range []string{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc", "dddddddddd"} {
				var err error
				if out, _, err = r.Push(out, &cdc.Message{Kind: cdc.KindUpdate, Update: cdc.Update{Data: []byte(d), Time: 0, Diff: 1}}, cdc.Pos{}); err != nil {
					t.Fatal(err)
				}
			}
			stmt := cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 4})
			out, _, err := r.Push(out, &stmt, cdc.Pos{})
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != tc.want || r.Releasing() != (tc.want < 5) {
				t.Fatalf("the completing push appended %d records (releasing %v), want %d", len(out), r.Releasing(), tc.want)
			}
			if out, err = drainRelease(r, out); err != nil || len(out) != 5 {
				t.Fatalf("after the rest: %d records (%v), want 5", len(out), err)
			}
		})
	}
}
