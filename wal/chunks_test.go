package wal

import (
	"errors"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestChunksListWhatScanReadsWithTheirSpans: a chunk's index record keeps
// the smallest Time - Span of its entries, Chunks(from) lists the chunks
// whose last time is at least from, and ReadChunk gives back each one's
// entries in arrival order.
func TestChunksListWhatScanReadsWithTheirSpans(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	var b Batch
	for i := range 3000 {
		e := Entry{Time: uint64(100 + i/10), Arrival: uint64(i), Line: uint64(i)}
		if i%500 == 7 {
			e.Span = 50 // a statement reaching 50 times back
		}
		e.Body = body(e)
		b.Add(e)
	}
	chunks := b.Chunks(10)
	if len(chunks) != 3 {
		t.Fatalf("%d chunks, want 3 (1024 entries each at most)", len(chunks))
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := b.Write(tx, 1, 10); return err }); err != nil {
		t.Fatal(err)
	}
	if c := chunks[0]; c.Seq != 10 || c.First != 100-50 || c.Last != 100+1023/10 {
		t.Errorf("first chunk %+v", c)
	}
	if c := chunks[1]; c.First != 100+1507/10-50 || c.Last != 100+2047/10 {
		t.Errorf("second chunk %+v: entry 1507 reaches back to time %d", c, 100+1507/10-50)
	}
	err := db.View(func(tx *bolt.Tx) error {
		var listed []ChunkInfo
		if err := (Log{}).Chunks(tx, 250, func(c ChunkInfo) error { listed = append(listed, c); return nil }); err != nil {
			return err
		}
		if !slices.Equal(listed, chunks[1:]) {
			t.Errorf("Chunks(250) = %+v, want %+v", listed, chunks[1:])
		}
		n, prev := 0, uint64(0)
		err := (Log{}).ReadChunk(tx, chunks[2], func(e *Entry) error {
			if n > 0 && e.Arrival != prev+1 || string(e.Body) != string(body(*e)) {
				t.Errorf("entry %+v after arrival %d", e, prev)
			}
			n, prev = n+1, e.Arrival
			return nil
		})
		if n != 3000-2048 {
			t.Errorf("%d entries read back, want %d", n, 3000-2048)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadChunkOfAChunkNotThereIsCorruption(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	err := db.View(func(tx *bolt.Tx) error {
		return (Log{}).ReadChunk(tx, ChunkInfo{Seq: 3, First: 1, Last: 2}, func(*Entry) error { return nil })
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want corruption", err)
	}
}
