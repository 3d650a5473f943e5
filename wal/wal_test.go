package wal

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cdclog/cdclog/internal/checksum"
	bolt "go.etcd.io/bbolt"
	"pgregory.net/rapid"
)

// openTestDB opens a fresh database in a new directory under dir; the
// caller closes it.
func openTestDB(t interface{ Fatal(...any) }, dir string) *bolt.DB {
	sub, err := os.MkdirTemp(dir, "wal")
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(sub, "wal.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		tx.CreateBucketIfNotExists(bucketWAL)
		tx.CreateBucketIfNotExists(bucketSeq)
		return nil
	})
	return db
}

func body(e Entry) []byte { return []byte(fmt.Sprintf("t%d-a%d", e.Time, e.Arrival)) }

// writeBatches appends the batches and returns every entry written, in
// arrival order.
func writeBatches(t *rapid.T, db *bolt.DB, batches [][]Entry) []Entry {
	var all []Entry
	chunk := uint64(0)
	for i, entries := range batches {
		var b Batch
		for _, e := range entries {
			b.Add(e)
			all = append(all, e)
		}
		err := db.Update(func(tx *bolt.Tx) error {
			n, err := b.Write(tx, uint64(i), chunk)
			chunk += n
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return all
}

func genBatches(t *rapid.T) [][]Entry {
	arrival := uint64(0)
	nb := rapid.IntRange(0, 6).Draw(t, "batches")
	batches := make([][]Entry, nb)
	for i := range batches {
		n := rapid.IntRange(1, 9000).Draw(t, "entries")
		base := rapid.Uint64Range(0, 1<<20).Draw(t, "base")
		for j := 0; j < n; j++ {
			e := Entry{Time: base + uint64(j/3) + rapid.Uint64Range(0, 50).Draw(t, "jitter"), Arrival: arrival,
				Source: uint64(j % 3), Line: arrival + 1, Offset: arrival * 40}
			if j%1000 == 7 {
				e.Time = ^uint64(0) // an unbounded statement's filing time
			}
			e.Body = body(e)
			arrival++
			batches[i] = append(batches[i], e)
		}
	}
	return batches
}

func collect(db *bolt.DB, scan func(tx *bolt.Tx, fn func(*Entry) error) error) []Entry {
	var got []Entry
	db.View(func(tx *bolt.Tx) error {
		return scan(tx, func(e *Entry) error {
			c := *e
			c.Body = slices.Clone(e.Body)
			got = append(got, c)
			return nil
		})
	})
	return got
}

func sortByArrival(es []Entry) {
	slices.SortFunc(es, func(a, b Entry) int { return int(int64(a.Arrival) - int64(b.Arrival)) })
}

func TestScanFindsExactlyTheEntriesFromATime(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		db := openTestDB(t, dir)
		defer db.Close()
		all := writeBatches(t, db, genBatches(t))
		from := rapid.Uint64Range(0, 1<<20+4000).Draw(t, "from")
		got := collect(db, func(tx *bolt.Tx, fn func(*Entry) error) error { return Log{}.Scan(tx, from, fn) })
		var want []Entry
		for _, e := range all {
			if e.Time >= from {
				want = append(want, e)
			}
		}
		sortByArrival(got)
		if !slices.EqualFunc(got, want, entryEqual) {
			t.Fatalf("scan from %d: %d entries, want %d", from, len(got), len(want))
		}
	})
}

func TestScanArrivalReplaysTheAppendOrder(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		db := openTestDB(t, dir)
		defer db.Close()
		all := writeBatches(t, db, genBatches(t))
		got := collect(db, Log{}.ScanArrival)
		if !slices.EqualFunc(got, all, entryEqual) {
			t.Fatalf("arrival scan: %d entries, want %d", len(got), len(all))
		}
	})
}

func TestDeleteBelowKeepsEveryEntryAtOrAboveTheTime(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		db := openTestDB(t, dir)
		defer db.Close()
		all := writeBatches(t, db, genBatches(t))
		cut := rapid.Uint64Range(0, 1<<20+4000).Draw(t, "cut")
		db.Update(func(tx *bolt.Tx) error { _, err := Log{}.DeleteBelow(tx, cut); return err })
		left := collect(db, Log{}.ScanArrival)
		var mustKeep []Entry
		for _, e := range all {
			if e.Time >= cut {
				mustKeep = append(mustKeep, e)
			}
		}
		kept := 0
		for _, e := range left {
			if e.Time >= cut {
				kept++
			}
		}
		if kept != len(mustKeep) {
			t.Fatalf("kept %d entries at or above %d, want %d", kept, cut, len(mustKeep))
		}
		var s Stats
		db.View(func(tx *bolt.Tx) error { s, _ = Log{}.ReadStats(tx); return nil })
		if s.Entries != uint64(len(left)) {
			t.Fatalf("stats say %d entries, scan found %d", s.Entries, len(left))
		}
	})
}

func TestABatchCostsFewKeys(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	var b Batch
	for i := uint64(0); i < 65536; i++ {
		b.Add(Entry{Time: i / 3, Arrival: i, Body: []byte(`{"update":{"data":"key-1","time":1,"diff":1}}`)})
	}
	db.Update(func(tx *bolt.Tx) error { _, err := b.Write(tx, 0, 0); return err })
	var s Stats
	db.View(func(tx *bolt.Tx) error { s, _ = Log{}.ReadStats(tx); return nil })
	// Each chunk is full up to its entry or byte limit: hundreds of
	// messages per bbolt key.
	perChunk := min(MaxChunkEntries, MaxChunkBytes/(46+16))
	if s.Entries != 65536 || s.Chunks > 65536/perChunk+1 || s.MaxTime != 65535/3 {
		t.Fatalf("stats %+v", s)
	}
}

func entryEqual(a, b Entry) bool {
	return a.Time == b.Time && a.Arrival == b.Arrival && a.Source == b.Source && a.Line == b.Line &&
		a.Offset == b.Offset && string(a.Body) == string(b.Body)
}

// FuzzChunkReader feeds the chunk decoder any bytes, as an old chunk
// (versions 1 and 2, read without a checksum) and as a new one: it must
// return a reason or entries, never panic or read past the chunk.
func FuzzChunkReader(f *testing.F) {
	f.Add(appendChunkV1(nil, 3, 5, []Entry{{Time: 5, Arrival: 9, Body: []byte("x")}, {Time: 7, Arrival: 2, Line: 4}}))
	var b Batch
	b.Add(Entry{Time: 7, Arrival: 9, Body: []byte("x")})
	b.Add(Entry{Time: 5, Arrival: 10, Line: 4, Body: make([]byte, 200)})
	f.Add(chunkV2Of(b.chunks[0].value(3, 0)))
	f.Add(b.chunks[0].value(3, 0))
	f.Add([]byte{1, 0, 200, 1})
	key := make([]byte, 8)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, reason := openChunk(key, b, true)
		if reason != "" {
			return
		}
		var e Entry
		for {
			ok, reason := r.next(&e)
			if reason != "" || !ok {
				return
			}
		}
	})
}

// FuzzChecksummedChunk feeds the version 3 decoder chunks whose checksum
// matches whatever follows it, so that the fuzzer reaches the decoding
// behind the checksum: it must decode or give a reason, never panic; and a
// chunk a Batch wrote must decode to the entries it was given.
func FuzzChecksummedChunk(f *testing.F) {
	var b Batch
	b.Add(Entry{Time: 7, Arrival: 9, Body: []byte("x")})
	b.Add(Entry{Time: 5, Arrival: 10, Line: 4, Body: make([]byte, 200)})
	f.Add(b.chunks[0].value(3, 11)[1+checksum.Size:], uint64(11))
	f.Add([]byte{0, 0, 1, 5, 9}, uint64(0))
	f.Fuzz(func(t *testing.T, rest []byte, seq uint64) {
		key := binary.BigEndian.AppendUint64(nil, seq)
		v := append([]byte{chunkV3}, binary.BigEndian.AppendUint32(nil, checksum.Of(key, rest))...)
		v = append(v, rest...)
		r, reason := openChunk(key, v, false)
		if reason != "" {
			return
		}
		var e Entry
		for n := 0; ; n++ {
			ok, reason := r.next(&e)
			if reason != "" || !ok {
				return
			}
			if n > len(v) {
				t.Fatalf("%d entries from %d bytes", n, len(v))
			}
		}
	})
}

// chunkV2Of turns a version 3 chunk into the version 2 chunk with the same
// entries, as cdclog wrote it before checksums: version 3 is version 2
// with the checksum after the version byte.
func chunkV2Of(v3 []byte) []byte {
	return append([]byte{chunkV2}, v3[1+checksum.Size:]...)
}

func TestDeleteBelowRemovesWhollyCompletedChunks(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	for batch := uint64(0); batch < 3; batch++ {
		var b Batch
		for i := uint64(0); i < 10000; i++ {
			b.Add(Entry{Time: batch*10000 + i, Arrival: batch*10000 + i, Body: []byte("m")})
		}
		db.Update(func(tx *bolt.Tx) error { _, err := b.Write(tx, batch, batch*100); return err })
	}
	var removed int
	db.Update(func(tx *bolt.Tx) error { removed, _ = Log{}.DeleteBelow(tx, 20000); return nil })
	var s Stats
	db.View(func(tx *bolt.Tx) error { s, _ = Log{}.ReadStats(tx); return nil })
	if removed == 0 || s.Entries != 10000 || s.MinTime != 20000 {
		t.Fatalf("removed %d chunks, left %+v", removed, s)
	}
}

func TestABatchIsReusableAfterResetAndKeepsLongBodies(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	var b Batch
	var all []Entry
	arrival, chunk := uint64(0), uint64(0)
	for batch := range uint64(3) {
		for i := range 3000 {
			e := Entry{Time: batch*1000 + uint64(i%7), Arrival: arrival, Source: batch, Line: uint64(i), Offset: uint64(i) * 1000}
			// Bodies from empty to past the one-byte length, and the
			// largest time beside small ones (offsets that wrap).
			e.Body = []byte(strings.Repeat("b", (i*37)%300))
			if i%500 == 1 {
				e.Time = ^uint64(0)
			}
			b.Add(e)
			all = append(all, e)
			arrival++
		}
		if b.Len() != 3000 {
			t.Fatalf("batch %d holds %d entries, want 3000", batch, b.Len())
		}
		err := db.Update(func(tx *bolt.Tx) error {
			n, err := b.Write(tx, batch, chunk)
			chunk += n
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		b.Reset()
	}
	if got := collect(db, Log{}.ScanArrival); !slices.EqualFunc(got, all, entryEqual) {
		t.Fatalf("read back %d entries, want %d", len(got), len(all))
	}
}

func TestVersionOneChunksStillRead(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	entries := []Entry{
		{Time: 9, Arrival: 4, Source: 1, Line: 2, Offset: 30, Body: []byte("a")},
		{Time: 7, Arrival: 5, Body: []byte(strings.Repeat("z", 200))},
	}
	err := db.Update(func(tx *bolt.Tx) error {
		wal, seq, _ := buckets(tx)
		return putChunk(wal, seq, 0, 0, 7, 9, len(entries), appendChunkV1(nil, 0, 7, entries))
	})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(db, func(tx *bolt.Tx, fn func(*Entry) error) error { return Log{LegacyBelow: 1}.Scan(tx, 0, fn) })
	if !slices.EqualFunc(got, entries, entryEqual) {
		t.Fatalf("read %+v", got)
	}
}

// TestScanArrivalSortsTimeSortedVersionOneBatches: before chunks were cut
// in arrival order, a batch was sorted by time and cut into version 1
// chunks, so a batch's arrivals interleave across its chunks. ScanArrival
// (replay --rederive and --verify) streamed them as stored, in time order,
// and the re-derived stream of such a database differed from its stored
// output. It must give every entry in arrival order, across old chunks
// and new ones.
func TestScanArrivalSortsTimeSortedVersionOneBatches(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	e := func(tm, arrival uint64) Entry {
		return Entry{Time: tm, Arrival: arrival, Line: arrival + 1, Body: []byte(fmt.Sprintf("m%d", arrival))}
	}
	// Batch 1 (arrivals 0 to 5) sorted by time and cut into two chunks;
	// batch 2 (arrivals 6 to 8) in one; then a version 3 chunk.
	chunks := []struct {
		batch   uint64
		entries []Entry
	}{
		{1, []Entry{e(0, 4), e(1, 2), e(1, 5)}},
		{1, []Entry{e(2, 0), e(3, 1), e(3, 3)}},
		{2, []Entry{e(3, 8), e(4, 6), e(5, 7)}},
	}
	err := db.Update(func(tx *bolt.Tx) error {
		wal, seq, _ := buckets(tx)
		for i, c := range chunks {
			first, last := c.entries[0].Time, c.entries[len(c.entries)-1].Time
			if err := putChunk(wal, seq, c.batch, uint64(i), first, last, len(c.entries), appendChunkV1(nil, c.batch, first, c.entries)); err != nil {
				return err
			}
		}
		var b Batch
		b.Add(e(7, 9))
		b.Add(e(6, 10))
		_, err := b.Write(tx, 3, uint64(len(chunks)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(db, Log{LegacyBelow: uint64(len(chunks))}.ScanArrival)
	if len(got) != 11 {
		t.Fatalf("read %d entries, want 11", len(got))
	}
	for i := range got {
		if got[i].Arrival != uint64(i) || string(got[i].Body) != fmt.Sprintf("m%d", i) || got[i].Line != uint64(i)+1 {
			t.Fatalf("entry %d: %+v, want arrival %d (arrivals in order: %v)", i, got[i], i, arrivals(got))
		}
	}
}

func arrivals(es []Entry) []uint64 {
	var a []uint64
	for _, e := range es {
		a = append(a, e.Arrival)
	}
	return a
}

func TestReadStatsReleasingReleasesAsItWalksAndCountsTheSame(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	const chunks = 2*statsReleaseEvery + 100
	err := db.Update(func(tx *bolt.Tx) error {
		var b Batch
		for i := range uint64(chunks) { // one chunk a batch
			b.Reset()
			b.Add(Entry{Time: i, Arrival: i, Body: []byte(`{"update":{"data":"k","time":1,"diff":1}}`)})
			if _, err := b.Write(tx, i, i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var plain, released Stats
	releases := 0
	err = db.View(func(tx *bolt.Tx) error {
		var err error
		if plain, err = (Log{}).ReadStats(tx); err != nil {
			return err
		}
		released, err = Log{}.ReadStatsReleasing(tx, func() { releases++ })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if plain != released || plain.Chunks != chunks {
		t.Fatalf("stats %+v with releases, %+v without; want %d chunks", released, plain, chunks)
	}
	if want := chunks/statsReleaseEvery + 1; releases != want { // and once at the end
		t.Fatalf("released %d times over %d index records, want %d", releases, chunks, want)
	}
}
