package wal

import (
	"testing"

	bolt "go.etcd.io/bbolt"
	"pgregory.net/rapid"
)

// TestMaintainedStatsEqualAFreshWalk keeps a log's Stats the way a
// processor does (Plus the Written of each batch, DeleteBelowUpdating for
// each gc) over random writes, with spans, and deletions, and checks them
// against ReadStats after every step.
func TestMaintainedStatsEqualAFreshWalk(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		db := openTestDB(t, dir)
		defer db.Close()
		var kept Stats
		chunk, arrival := uint64(0), uint64(0)
		steps := rapid.IntRange(1, 12).Draw(t, "steps")
		for step := range steps {
			if rapid.IntRange(0, 3).Draw(t, "op") == 0 {
				cut := rapid.Uint64Range(0, 5000).Draw(t, "cut")
				err := db.Update(func(tx *bolt.Tx) error {
					_, err := Log{}.DeleteBelowUpdating(tx, cut, &kept, nil)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			} else {
				var b Batch
				n := rapid.IntRange(1, 1500).Draw(t, "entries")
				base := rapid.Uint64Range(0, 4000).Draw(t, "base")
				for j := range n {
					e := Entry{Time: base + uint64(j/50), Arrival: arrival}
					if j%97 == 3 {
						e.Span = rapid.Uint64Range(0, 6000).Draw(t, "span") // may reach below 0
					}
					e.Body = body(e)
					b.Add(e)
					arrival++
				}
				err := db.Update(func(tx *bolt.Tx) error {
					used, err := b.Write(tx, uint64(step), chunk)
					chunk += used
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				kept = kept.Plus(b.Written())
			}
			var walked Stats
			if err := db.View(func(tx *bolt.Tx) (err error) { walked, err = Log{}.ReadStats(tx); return err }); err != nil {
				t.Fatal(err)
			}
			if kept != walked {
				t.Fatalf("step %d: maintained %+v, a walk reads %+v", step, kept, walked)
			}
		}
	})
}

func TestStatsPlusAnEmptyLogIsTheOther(t *testing.T) {
	s := Stats{Chunks: 2, Entries: 10, Bytes: 300, MinTime: 5, MaxTime: 9}
	if got := s.Plus(Stats{}); got != s {
		t.Fatalf("s + empty = %+v", got)
	}
	if got := (Stats{}).Plus(s); got != s {
		t.Fatalf("empty + s = %+v", got)
	}
	o := Stats{Chunks: 1, Entries: 1, Bytes: 60, MinTime: 7, MaxTime: 20}
	if got, want := s.Plus(o), (Stats{Chunks: 3, Entries: 11, Bytes: 360, MinTime: 5, MaxTime: 20}); got != want {
		t.Fatalf("s + o = %+v, want %+v", got, want)
	}
}

func TestWrittenIsZeroAfterReset(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	var b Batch
	b.Add(Entry{Time: 3, Body: []byte("x")})
	if err := db.Update(func(tx *bolt.Tx) error { _, err := b.Write(tx, 0, 0); return err }); err != nil {
		t.Fatal(err)
	}
	if w := b.Written(); w.Chunks != 1 || w.Entries != 1 || w.MinTime != 3 || w.MaxTime != 3 {
		t.Fatalf("written %+v", w)
	}
	b.Reset()
	if w := b.Written(); w != (Stats{}) {
		t.Fatalf("after Reset: %+v", w)
	}
}

func TestWrittenIsZeroAfterAWriteOfNothing(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	var b Batch
	b.Add(Entry{Time: 3, Body: []byte("x")})
	write := func(next uint64) {
		if err := db.Update(func(tx *bolt.Tx) error { _, err := b.Write(tx, 0, next); return err }); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	b.used = 0 // as Reset does, without clearing written
	write(1)
	if w := b.Written(); w != (Stats{}) {
		t.Fatalf("after writing nothing: %+v", w)
	}
}
