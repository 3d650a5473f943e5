package ordering

import (
	"errors"
	"slices"
	"testing"
)

// rec names a record by shard and position for the tests.
type rec struct {
	shard, i int
}

func mustPush[S comparable, T any](t *testing.T, m *Merger[S, T], id S, k Key, r T) bool {
	t.Helper()
	inOrder, err := m.Push(id, k, r)
	if err != nil {
		t.Fatalf("Push(%v): %v", id, err)
	}
	return inOrder
}

// TestMergerWaitsForEveryOpenShard is the case the seed gets wrong: it
// orders only within one refill, so a record released while another shard
// is momentarily empty can be overtaken by an earlier record of that shard.
func TestMergerWaitsForEveryOpenShard(t *testing.T) {
	var m Merger[string, string]
	m.Add("a")
	m.Add("b")
	mustPush(t, &m, "a", key(t, "5", "1"), "a5")
	if _, _, ok := m.Next(); ok {
		t.Fatal("Next released a record while shard b is open and empty")
	}
	if got := m.Starved(nil); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("Starved = %v, want [b]", got)
	}
	mustPush(t, &m, "b", key(t, "3", "1"), "b3")
	it, id, ok := m.Next()
	if !ok || it.Record != "b3" || id != "b" {
		t.Fatalf("Next = %v from %v (%v), want b3 from b", it.Record, id, ok)
	}
	if _, _, ok := m.Next(); ok {
		t.Fatal("Next released a5 while b is open and empty again")
	}
	m.Close("b")
	it, id, ok = m.Next()
	if !ok || it.Record != "a5" || id != "a" {
		t.Fatalf("Next = %v from %v (%v), want a5 from a", it.Record, id, ok)
	}
}

// TestMergerCloseKeepsRecords: bloop's issue #111 dropped a closed shard's
// buffered records; here they are all released, in order.
func TestMergerCloseKeepsRecords(t *testing.T) {
	var m Merger[int, int]
	m.Add(1)
	m.Add(2)
	for i := range 5 {
		mustPush(t, &m, 1, key(t, "10", "1"), i)
	}
	if err := m.Close(1); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(1); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if m.Len() != 5 || m.Shards() != 2 {
		t.Fatalf("Len, Shards = %d, %d; want 5, 2", m.Len(), m.Shards())
	}
	if _, _, ok := m.Next(); ok {
		t.Fatal("released while shard 2 is open and empty")
	}
	m.Close(2)
	for i := range 5 {
		it, id, ok := m.Next()
		if !ok || it.Record != i || id != 1 {
			t.Fatalf("Next = %v from %v (%v), want %d from 1", it.Record, id, ok, i)
		}
	}
	if _, _, ok := m.Next(); ok || m.Len() != 0 || m.Shards() != 0 {
		t.Fatalf("after draining: Len %d, Shards %d", m.Len(), m.Shards())
	}
}

func TestMergerKeepsShardOrderWhenUnsorted(t *testing.T) {
	var m Merger[string, string]
	m.Add("a")
	m.Add("b")
	if !mustPush(t, &m, "a", key(t, "5", "0"), "a5") {
		t.Error("first push reported out of order")
	}
	if mustPush(t, &m, "a", key(t, "1", "0"), "a1") {
		t.Error("a smaller key than the previous one was not reported")
	}
	if !mustPush(t, &m, "a", key(t, "5", "0"), "a5'") {
		t.Error("an equal key was reported out of order")
	}
	mustPush(t, &m, "b", key(t, "3", "0"), "b3")
	m.Close("a")
	m.Close("b")
	var got []string
	for it, _, ok := m.Next(); ok; it, _, ok = m.Next() {
		got = append(got, it.Record)
	}
	// a1 cannot overtake a5: a shard's own order wins.
	if want := []string{"b3", "a5", "a1", "a5'"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestMergerMisuse(t *testing.T) {
	var m Merger[string, int]
	if _, err := m.Push("x", Key{}, 1); !errors.Is(err, ErrUnknownShard) {
		t.Errorf("Push to unknown shard: %v, want ErrUnknownShard", err)
	}
	if err := m.Close("x"); !errors.Is(err, ErrUnknownShard) {
		t.Errorf("Close unknown shard: %v, want ErrUnknownShard", err)
	}
	m.Add("x")
	if err := m.Add("x"); !errors.Is(err, ErrShardExists) {
		t.Errorf("Add twice: %v, want ErrShardExists", err)
	}
	mustPush(t, &m, "x", Key{}, 1)
	m.Close("x")
	if _, err := m.Push("x", Key{}, 2); !errors.Is(err, ErrShardClosed) {
		t.Errorf("Push to closed shard: %v, want ErrShardClosed", err)
	}
	if err := m.Add("x"); !errors.Is(err, ErrShardExists) {
		t.Errorf("Add of a closed shard still holding records: %v, want ErrShardExists", err)
	}
	m.Next()
	if err := m.Add("x"); err != nil {
		t.Errorf("Add after the shard was drained: %v", err)
	}
}

func TestMergerEmpty(t *testing.T) {
	m := NewMerger[int, int]()
	if _, _, ok := m.Next(); ok {
		t.Fatal("Next on an empty merger returned ok")
	}
	m.Add(1)
	m.Close(1)
	if _, _, ok := m.Next(); ok || m.Shards() != 0 {
		t.Fatal("a closed empty shard must be forgotten at once")
	}
}

// TestMergerQueueCompaction pushes far more records into one shard than are
// released at a time, so the queue compacts while keeping its order.
func TestMergerQueueCompaction(t *testing.T) {
	var m Merger[int, int]
	m.Add(0)
	next, want := 0, 0
	for round := range 50 {
		for range 100 {
			mustPush(t, &m, 0, key(t, "1", "1"), next)
			next++
		}
		for range 60 + round%7 {
			it, _, ok := m.Next()
			if !ok || it.Record != want {
				t.Fatalf("Next = %v (%v), want %d", it.Record, ok, want)
			}
			want++
		}
	}
	m.Close(0)
	for it, _, ok := m.Next(); ok; it, _, ok = m.Next() {
		if it.Record != want {
			t.Fatalf("Next = %v, want %d", it.Record, want)
		}
		want++
	}
	if want != next {
		t.Fatalf("released %d of %d", want, next)
	}
}
