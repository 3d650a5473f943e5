package ordering

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func key(t testing.TB, at, seq string) Key {
	t.Helper()
	k, err := ParseKey(at, seq)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestBufferZeroValue(t *testing.T) {
	var b Buffer[string]
	if b.Len() != 0 {
		t.Fatalf("Len = %d, want 0", b.Len())
	}
	if _, ok := b.Pop(); ok {
		t.Fatal("Pop on an empty buffer returned ok")
	}
	if _, ok := b.Peek(); ok {
		t.Fatal("Peek on an empty buffer returned ok")
	}
	b.Clear() // no panic on empty
}

func TestBufferPushPopOrder(t *testing.T) {
	var b Buffer[string]
	b.Push(key(t, "2023-11-14T22:13:21Z", "1"), "c") // 1700000001
	b.Push(key(t, "1700000000", "10"), "b")
	b.Push(key(t, "1700000000.0", "9"), "a") // 9 < 10 numerically
	b.Push(key(t, "1700000001", "1"), "d")   // equal to c's key: after c
	if b.Len() != 4 {
		t.Fatalf("Len = %d, want 4", b.Len())
	}
	peek, ok := b.Peek()
	if !ok || peek.Record != "a" {
		t.Fatalf("Peek = %v, %v; want a", peek.Record, ok)
	}
	if b.Len() != 4 {
		t.Fatal("Peek removed an item")
	}
	var got []string
	for it, ok := b.Pop(); ok; it, ok = b.Pop() {
		got = append(got, it.Record)
	}
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("pop order %v, want %v", got, want)
	}
}

func TestBufferTiesBrokenByClock(t *testing.T) {
	var b Buffer[int]
	k := key(t, "5", "5")
	for i := range 100 {
		b.Push(k, i)
	}
	var last uint64
	for i := range 100 {
		it, _ := b.Pop()
		if it.Record != i {
			t.Fatalf("pop %d returned record %d: equal keys must leave in arrival order", i, it.Record)
		}
		if it.Clock <= last {
			t.Fatalf("clock %d after %d: clocks must strictly increase", it.Clock, last)
		}
		last = it.Clock
	}
}

func TestBufferPushAll(t *testing.T) {
	var b Buffer[string]
	b.Push(key(t, "3", "0"), "late")
	b.PushAll([]Item[string]{
		{Key: key(t, "2", "0"), Record: "x", Clock: 999}, // Clock ignored
		{Key: key(t, "1", "0"), Record: "first"},
		{Key: key(t, "2", "0"), Record: "y"},
	})
	var got []string
	var clocks []uint64
	for it, ok := b.Pop(); ok; it, ok = b.Pop() {
		got = append(got, it.Record)
		clocks = append(clocks, it.Clock)
	}
	if want := []string{"first", "x", "y", "late"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if clocks[1] >= clocks[2] || clocks[1] == 999 {
		t.Fatalf("clocks %v: PushAll must give fresh clocks in slice order", clocks)
	}
}

func TestBufferClearKeepsClock(t *testing.T) {
	var b Buffer[int]
	b.Push(Key{}, 1)
	b.Push(Key{}, 2)
	b.Clear()
	if b.Len() != 0 {
		t.Fatalf("Len after Clear = %d", b.Len())
	}
	if _, ok := b.Pop(); ok {
		t.Fatal("Pop after Clear returned ok")
	}
	b.Push(Key{}, 3)
	it, _ := b.Peek()
	if it.Clock <= 2 {
		t.Fatalf("clock %d after Clear reuses a clock already handed out", it.Clock)
	}
}

// TestBufferModel checks the buffer against a sorted-slice model under
// random sequences of every operation.
func TestBufferModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b Buffer[int]
		var model []Item[int] // kept sorted by Before
		var clock uint64
		next := 0
		insert := func(k Key) {
			clock++
			it := Item[int]{Key: k, Clock: clock, Record: next}
			i, _ := slices.BinarySearchFunc(model, it, func(a, b Item[int]) int {
				if a.Before(b) {
					return -1
				}
				return 1
			})
			model = slices.Insert(model, i, it)
			next++
		}
		t.Repeat(map[string]func(*rapid.T){
			"push": func(t *rapid.T) {
				k := keyGen().Draw(t, "key")
				b.Push(k, next)
				insert(k)
			},
			"pushAll": func(t *rapid.T) {
				keys := rapid.SliceOfN(keyGen(), 0, 20).Draw(t, "keys")
				items := make([]Item[int], len(keys))
				for i, k := range keys {
					items[i] = Item[int]{Key: k, Record: next + i}
				}
				b.PushAll(items)
				for _, k := range keys {
					insert(k)
				}
			},
			"pop": func(t *rapid.T) {
				it, ok := b.Pop()
				if ok != (len(model) > 0) {
					t.Fatalf("Pop ok = %v with %d held", ok, len(model))
				}
				if ok {
					if it != model[0] {
						t.Fatalf("Pop = %+v, want %+v", it, model[0])
					}
					model = model[1:]
				}
			},
			"peek": func(t *rapid.T) {
				it, ok := b.Peek()
				if ok != (len(model) > 0) || (ok && it != model[0]) {
					t.Fatalf("Peek = %+v, %v; want %v", it, ok, model)
				}
			},
			"clear": func(t *rapid.T) {
				b.Clear()
				model = nil
			},
			"": func(t *rapid.T) {
				if b.Len() != len(model) {
					t.Fatalf("Len = %d, want %d", b.Len(), len(model))
				}
			},
		})
	})
}
