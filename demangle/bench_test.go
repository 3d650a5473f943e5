package demangle

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// seedLikeStream builds n messages shaped like the seed's mangled stream:
// four keys, most with no update at a time, one progress statement per
// time, about a third of messages duplicated, reordered within a window.
func seedLikeStream(n int) []cdc.Message {
	rng := rand.New(rand.NewPCG(25, 25))
	keys := [][]byte{[]byte(`"a"`), []byte(`"b"`), []byte(`"c"`), []byte(`"d"`)}
	var clean []cdc.Message
	for t := uint64(0); len(clean) < n; t++ {
		var c uint64
		for _, k := range keys {
			if rng.IntN(10) < 3 {
				clean = append(clean, cdc.NewUpdate(k, t, int64(rng.IntN(2)*2-1)))
				c++
			}
		}
		if c > 0 {
			clean = append(clean, cdc.NewProgress(t, t+1, cdc.Count{Time: t, Count: c}))
		} else {
			clean = append(clean, cdc.NewProgress(t, t+1))
		}
	}
	type item struct {
		at int
		m  cdc.Message
	}
	out := make([]cdc.Message, 0, n)
	var window []item
	for i, m := range clean {
		for c := 1 + rng.IntN(3)/2; c > 0; c-- {
			window = append(window, item{i + rng.IntN(8), m})
		}
		for j := 0; j < len(window); {
			if window[j].at <= i {
				out = append(out, window[j].m)
				window = append(window[:j], window[j+1:]...)
			} else {
				j++
			}
		}
	}
	for _, it := range window {
		out = append(out, it.m)
	}
	return out[:n]
}

func BenchmarkReceiverSeedLikeStream(b *testing.B) {
	msgs := seedLikeStream(1 << 20)
	b.ResetTimer()
	var out []cdc.Message
	pushed := 0
	for b.Loop() {
		r := New(0)
		for i := range msgs {
			var err error
			out, _, err = r.Push(out[:0], &msgs[i], cdc.Pos{})
			if err != nil {
				b.Fatal(err)
			}
		}
		pushed += len(msgs)
	}
	b.ReportMetric(float64(pushed)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkReceiverManyUpdatesPerTime(b *testing.B) {
	const perTime = 1000
	var msgs []cdc.Message
	for t := uint64(0); t < 100; t++ {
		for k := 0; k < perTime; k++ {
			msgs = append(msgs, cdc.NewUpdate([]byte(fmt.Sprintf(`{"id":%d}`, k)), t, 1))
		}
		msgs = append(msgs, cdc.NewProgress(t, t+1, cdc.Count{Time: t, Count: perTime}))
	}
	b.ResetTimer()
	pushed := 0
	var out []cdc.Message
	for b.Loop() {
		r := New(0)
		for i := range msgs {
			out, _, _ = r.Push(out[:0], &msgs[i], cdc.Pos{})
		}
		pushed += len(msgs)
	}
	b.ReportMetric(float64(pushed)/b.Elapsed().Seconds(), "msgs/s")
}

// bigTimeStream is one time holding n distinct updates (objects with an
// id, as a table's rows), about a third of them twice, shuffled, with its
// progress statement in the middle and the times before it complete.
func bigTimeStream(n int) []cdc.Message {
	rng := rand.New(rand.NewPCG(7, 7))
	var msgs []cdc.Message
	for k := 0; k < n; k++ {
		m := cdc.NewUpdate([]byte(fmt.Sprintf(`{"id":%d,"name":"row-%d"}`, k, k%97)), 5, 1)
		msgs = append(msgs, m)
		if rng.IntN(3) == 0 {
			msgs = append(msgs, m)
		}
	}
	rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	mid := len(msgs) / 2
	out := []cdc.Message{cdc.NewProgress(0, 5)}
	out = append(out, msgs[:mid]...)
	out = append(out, cdc.NewProgress(5, 6, cdc.Count{Time: 5, Count: uint64(n)}))
	return append(out, msgs[mid:]...)
}

// BenchmarkReceiverOneBigTime: one time of 1M distinct updates (issue 17
// goal 4: at most 3x the per-message cost of BenchmarkReceiverSeedLikeStream).
func BenchmarkReceiverOneBigTime(b *testing.B) {
	msgs := bigTimeStream(1 << 20)
	b.ResetTimer()
	var out []cdc.Message
	pushed := 0
	for b.Loop() {
		r := New(0)
		for i := range msgs {
			var err error
			if out, _, err = r.Push(out[:0], &msgs[i], cdc.Pos{}); err != nil {
				b.Fatal(err)
			}
		}
		if f, _ := r.Frontier(); f != 6 {
			b.Fatalf("frontier %d", f)
		}
		pushed += len(msgs)
	}
	b.ReportMetric(float64(pushed)/b.Elapsed().Seconds(), "msgs/s")
}

// bigTimeHeld holds n distinct updates shaped like bigTimeStream's (a
// table's rows by id), shuffled, in a fresh arena.
func bigTimeHeld(n int) (*arena, []heldUpdate) {
	rng := rand.New(rand.NewPCG(7, 7))
	var a arena
	updates := make([]heldUpdate, 0, n)
	for _, k := range rng.Perm(n) {
		updates = append(updates, a.hold(fmt.Appendf(nil, `{"id":%d,"name":"row-%d"}`, k, k%97), 1, cdc.Pos{}))
	}
	return &a, updates
}

// BenchmarkSortBigTime: the release's sort of one time of a million
// distinct updates, past keySortMax (sortByPrefix); each run sorts a
// fresh copy of the shuffled updates.
func BenchmarkSortBigTime(b *testing.B) {
	for _, n := range []int{keySortMax + 1, 1 << 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			a, shuffled := bigTimeHeld(n)
			updates := make([]heldUpdate, n)
			for b.Loop() {
				copy(updates, shuffled)
				sortCanonical(a, updates)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/update")
		})
	}
}
