package ordering

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// sliceSource is a Source over keys in memory; each record names its shard
// and position.
type sliceSource struct {
	shard int
	keys  []Key
	next  int
}

func (s *sliceSource) Next() (Key, rec, error) {
	if s.next == len(s.keys) {
		return Key{}, rec{}, io.EOF
	}
	s.next++
	return s.keys[s.next-1], rec{s.shard, s.next - 1}, nil
}

// shardsGen draws 1 to 8 shards of up to 30 keys each, sorted when sorted
// is set.
func shardsGen(sorted bool) *rapid.Generator[[][]Key] {
	return rapid.Custom(func(t *rapid.T) [][]Key {
		shards := rapid.SliceOfN(rapid.SliceOfN(keyGen(), 0, 30), 1, 8).Draw(t, "shards")
		if sorted {
			for _, s := range shards {
				slices.SortStableFunc(s, Key.Compare)
			}
		}
		return shards
	})
}

// mergeAll runs Merge over in-memory shards and returns what it emitted and
// the disorder reports.
func mergeAll(t *rapid.T, shards [][]Key) (out []Item[rec], from []int, disorder []rec) {
	sources := make([]Source[rec], len(shards))
	srcs := make([]*sliceSource, len(shards))
	for i, keys := range shards {
		srcs[i] = &sliceSource{shard: i, keys: keys}
		sources[i] = srcs[i]
	}
	err := Merge(sources, func(i int, it Item[rec]) error {
		out = append(out, it)
		from = append(from, i)
		return nil
	}, func(i int, k Key) {
		disorder = append(disorder, rec{i, srcs[i].next - 1})
		if k != srcs[i].keys[srcs[i].next-1] {
			t.Fatalf("onDisorder got key %v, want the key just read", k)
		}
	})
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	return out, from, disorder
}

// checkPermutationAndShardOrder: every input record is emitted exactly once,
// under its own key and source, and each shard's records leave in order.
func checkPermutationAndShardOrder(t *rapid.T, shards [][]Key, out []Item[rec], from []int) {
	total := 0
	for _, s := range shards {
		total += len(s)
	}
	if len(out) != total {
		t.Fatalf("emitted %d records, input has %d", len(out), total)
	}
	nextOf := make([]int, len(shards))
	for j, it := range out {
		r := it.Record
		if from[j] != r.shard {
			t.Fatalf("record %v reported as from source %d", r, from[j])
		}
		if r.i != nextOf[r.shard] {
			t.Fatalf("output %d is record %d of shard %d, want record %d: shard order broken or record lost/duplicated",
				j, r.i, r.shard, nextOf[r.shard])
		}
		if it.Key != shards[r.shard][r.i] {
			t.Fatalf("record %v emitted under key %v, want %v", r, it.Key, shards[r.shard][r.i])
		}
		nextOf[r.shard]++
	}
}

// TestMergeSortedShards: for sorted shards (with equal times and sequence
// numbers within and across shards, and sequence numbers beyond 2^64), the
// output is a permutation of the input, non-decreasing in the key, strictly
// increasing in (key, clock), and keeps every shard's order.
func TestMergeSortedShards(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := shardsGen(true).Draw(t, "shards")
		out, from, disorder := mergeAll(t, shards)
		checkPermutationAndShardOrder(t, shards, out, from)
		for j := 1; j < len(out); j++ {
			if out[j].Key.Compare(out[j-1].Key) < 0 {
				t.Fatalf("output %d key %v < previous %v", j, out[j].Key, out[j-1].Key)
			}
			if !out[j-1].Before(out[j]) {
				t.Fatalf("output %d (%v, clock %d) not after previous (%v, clock %d)",
					j, out[j].Key, out[j].Clock, out[j-1].Key, out[j-1].Clock)
			}
		}
		if len(disorder) != 0 {
			t.Fatalf("sorted shards reported out of order: %v", disorder)
		}
	})
}

// TestMergeUnsortedShards: for shards in any order, nothing is lost or
// duplicated, each shard's order is kept, and exactly the records whose key
// is below their predecessor's in the same shard are reported.
func TestMergeUnsortedShards(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := shardsGen(false).Draw(t, "shards")
		out, from, disorder := mergeAll(t, shards)
		checkPermutationAndShardOrder(t, shards, out, from)
		var want []rec
		for s, keys := range shards {
			for i := 1; i < len(keys); i++ {
				if keys[i].Compare(keys[i-1]) < 0 {
					want = append(want, rec{s, i})
				}
			}
		}
		slices.SortFunc(disorder, compareRec)
		if !slices.Equal(disorder, want) {
			t.Fatalf("disorder reported %v, want %v", disorder, want)
		}
	})
}

func compareRec(a, b rec) int {
	if a.shard != b.shard {
		return a.shard - b.shard
	}
	return a.i - b.i
}

// TestMergerAcrossRefills drives a Merger by hand: sorted shards arrive in
// random batches, Next is called at random moments and shards close at
// random, and the whole released sequence, across every refill, must be in
// key order, with nothing lost and each shard in its order. Next must
// release exactly when every open shard holds a record.
func TestMergerAcrossRefills(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := shardsGen(true).Draw(t, "shards")
		var m Merger[int, rec]
		pushed := make([]int, len(shards))
		closed := make([]bool, len(shards))
		for i := range shards {
			m.Add(i)
		}
		var out []Item[rec]
		var from []int
		next := func(t *rapid.T) {
			safe := m.Len() > 0
			for i := range shards {
				if !closed[i] && pushedNotReleased(out, i, pushed[i]) == 0 {
					safe = false
				}
			}
			it, id, ok := m.Next()
			if ok != safe {
				t.Fatalf("Next ok = %v, want %v", ok, safe)
			}
			if ok {
				out, from = append(out, it), append(from, id)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"push": func(t *rapid.T) {
				i := rapid.IntRange(0, max(len(shards)-1, 0)).Draw(t, "shard")
				if len(shards) == 0 || closed[i] {
					t.Skip("no open shard")
				}
				n := rapid.IntRange(1, 5).Draw(t, "n")
				for ; n > 0 && pushed[i] < len(shards[i]); n-- {
					if _, err := m.Push(i, shards[i][pushed[i]], rec{i, pushed[i]}); err != nil {
						t.Fatal(err)
					}
					pushed[i]++
				}
			},
			"close": func(t *rapid.T) {
				i := rapid.IntRange(0, max(len(shards)-1, 0)).Draw(t, "shard")
				if len(shards) == 0 || closed[i] || pushed[i] < len(shards[i]) {
					t.Skip("shard not finished")
				}
				if err := m.Close(i); err != nil {
					t.Fatal(err)
				}
				closed[i] = true
			},
			"next": next,
		})
		// Finish: push the rest, close everything, drain.
		for i := range shards {
			for ; pushed[i] < len(shards[i]); pushed[i]++ {
				m.Push(i, shards[i][pushed[i]], rec{i, pushed[i]})
			}
			m.Close(i)
			closed[i] = true
		}
		for m.Len() > 0 {
			next(t)
		}
		checkPermutationAndShardOrder(t, shards, out, from)
		for j := 1; j < len(out); j++ {
			if !out[j-1].Before(out[j]) {
				t.Fatalf("output %d (%v) not after previous (%v): order broken across refills", j, out[j].Key, out[j-1].Key)
			}
		}
	})
}

// pushedNotReleased counts shard i's records pushed and not yet released.
func pushedNotReleased(out []Item[rec], i, pushed int) int {
	released := 0
	for _, it := range out {
		if it.Record.shard == i {
			released++
		}
	}
	return pushed - released
}

// reusingSource returns its records in one buffer it overwrites on every
// Next, as a line reader does; Merge must emit before reading again.
type reusingSource struct {
	keys []Key
	buf  []byte
	next int
	name string
}

func (s *reusingSource) Next() (Key, []byte, error) {
	if s.next == len(s.keys) {
		return Key{}, nil, io.EOF
	}
	s.buf = fmt.Appendf(s.buf[:0], "%s-%d", s.name, s.next)
	s.next++
	return s.keys[s.next-1], s.buf, nil
}

func TestMergeEmitsBeforeReusing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := shardsGen(true).Draw(t, "shards")
		sources := make([]Source[[]byte], len(shards))
		for i, keys := range shards {
			sources[i] = &reusingSource{keys: keys, name: fmt.Sprint(i)}
		}
		seen := map[string]bool{}
		err := Merge(sources, func(i int, it Item[[]byte]) error {
			s := string(it.Record)
			if seen[s] {
				t.Fatalf("record %s emitted twice: its memory was reused before emit", s)
			}
			seen[s] = true
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	})
}

type failingSource struct {
	left int
	err  error
}

func (s *failingSource) Next() (Key, rec, error) {
	if s.left == 0 {
		return Key{}, rec{}, s.err
	}
	s.left--
	return Key{}, rec{}, nil
}

func TestMergeStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	sources := []Source[rec]{&failingSource{left: 3, err: boom}, &failingSource{left: 100, err: io.EOF}}
	n := 0
	err := Merge(sources, func(int, Item[rec]) error { n++; return nil }, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("Merge error = %v, want boom", err)
	}
	if n >= 3+100 {
		t.Fatalf("emitted %d records: Merge went on past the error", n)
	}
	stop := errors.New("stop")
	err = Merge([]Source[rec]{&failingSource{left: 5, err: io.EOF}}, func(int, Item[rec]) error { return stop }, nil)
	if !errors.Is(err, stop) {
		t.Fatalf("Merge error = %v, want the emit error", err)
	}
	if err := Merge[rec](nil, nil, nil); err != nil {
		t.Fatalf("Merge of no sources: %v", err)
	}
}

// countingSource counts the records it has handed out that Merge has not
// emitted yet.
type countingSource struct {
	sliceSource
	out *int
}

func (s *countingSource) Next() (Key, rec, error) {
	k, r, err := s.sliceSource.Next()
	if err == nil {
		*s.out++
	}
	return k, r, err
}

// TestMergeHoldsOneRecordPerSource: memory is bounded by the number of
// sources, not by their length.
func TestMergeHoldsOneRecordPerSource(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		shards := shardsGen(rapid.Bool().Draw(t, "sorted")).Draw(t, "shards")
		outstanding := make([]int, len(shards))
		sources := make([]Source[rec], len(shards))
		for i, keys := range shards {
			sources[i] = &countingSource{sliceSource{shard: i, keys: keys}, &outstanding[i]}
		}
		err := Merge(sources, func(i int, _ Item[rec]) error {
			for j, n := range outstanding {
				if n > 1 {
					t.Fatalf("source %d has %d records held", j, n)
				}
			}
			outstanding[i]--
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	})
}
