package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// smallLog writes two batches of a few entries each and returns the
// database; each batch is one chunk.
func smallLog(t *testing.T) *bolt.DB {
	t.Helper()
	db := openTestDB(t, t.TempDir())
	for batch := range uint64(2) {
		var b Batch
		for i := range uint64(3) {
			e := Entry{Time: 10*batch + i, Arrival: 3*batch + i, Line: i + 1, Offset: 7 * i}
			e.Body = body(e)
			b.Add(e)
		}
		if err := db.Update(func(tx *bolt.Tx) error { _, err := b.Write(tx, batch, batch); return err }); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// readers are every way the log is read; each must report damage.
var readers = []struct {
	name                   string
	readsChunk, readsIndex bool
	read                   func(Log, *bolt.Tx) error
}{
	{"Scan", true, true, func(l Log, tx *bolt.Tx) error { return l.Scan(tx, 0, func(*Entry) error { return nil }) }},
	{"ScanArrival", true, false, func(l Log, tx *bolt.Tx) error { return l.ScanArrival(tx, func(*Entry) error { return nil }) }},
	{"ReadStats", false, true, func(l Log, tx *bolt.Tx) error { _, err := l.ReadStats(tx); return err }},
	{"DeleteBelow", false, true, func(l Log, tx *bolt.Tx) error { _, err := l.DeleteBelow(tx, ^uint64(0)); return err }},
	{"Check", true, true, func(l Log, tx *bolt.Tx) error {
		var first error
		l.Check(tx, func(*Entry) error { return nil }, func(ce *store.CorruptError) {
			if first == nil {
				first = ce
			}
		})
		return first
	}},
}

// errRollback ends the transaction of readLog without committing.
var errRollback = errors.New("rollback")

// readLog runs a reader in a write transaction (DeleteBelow needs one)
// that it rolls back.
func readLog(db *bolt.DB, read func(Log, *bolt.Tx) error, l Log) error {
	err := db.Update(func(tx *bolt.Tx) error {
		if err := read(l, tx); err != nil {
			return err
		}
		return errRollback
	})
	if err == errRollback {
		return nil
	}
	return err
}

// expectCorrupt checks that err is a *store.CorruptError naming bucket
// and key, and wrapping both ErrCorrupt sentinels.
func expectCorrupt(t *testing.T, err error, bucket string, key []byte) {
	t.Helper()
	var ce *store.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, store.ErrCorrupt) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want a *store.CorruptError", err)
	}
	if ce.Bucket != bucket || !bytes.Equal(ce.Key, key) {
		t.Fatalf("%v: names bucket %s key %x, want %s %x", err, ce.Bucket, ce.Key, bucket, key)
	}
}

// TestEveryFlippedBitOfAStoredRecordIsReported: for each bit of each
// chunk and index record, flipped in the stored value, every reader that
// reads the record fails with a *store.CorruptError naming its bucket and
// key; none returns entries read from it.
func TestEveryFlippedBitOfAStoredRecordIsReported(t *testing.T) {
	db := smallLog(t)
	defer db.Close()
	type rec struct{ bucket, key, value []byte }
	var recs []rec
	db.View(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketSeq, bucketWAL} {
			tx.Bucket(b).ForEach(func(k, v []byte) error {
				recs = append(recs, rec{b, slices.Clone(k), slices.Clone(v)})
				return nil
			})
		}
		return nil
	})
	put := func(r rec, v []byte) {
		if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(r.bucket).Put(r.key, v) }); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range recs {
		for bit := range len(r.value) * 8 {
			bad := slices.Clone(r.value)
			bad[bit/8] ^= 1 << (bit % 8)
			put(r, bad)
			for _, rd := range readers {
				if !rd.readsChunk && bytes.Equal(r.bucket, bucketSeq) || !rd.readsIndex && bytes.Equal(r.bucket, bucketWAL) {
					continue
				}
				err := readLog(db, rd.read, Log{})
				if err == nil {
					t.Fatalf("%s read %s %x with bit %d flipped", rd.name, r.bucket, r.key, bit)
				}
				expectCorrupt(t, err, string(r.bucket), r.key)
			}
		}
		put(r, r.value)
	}
}

// TestADamagedIndexKeyIsReported: a bit flipped in an index record's key
// moves the record (a later time, another chunk); the checksum covers the
// key, so Scan from 0 and Check report it, and DeleteBelow deletes
// nothing on its account.
func TestADamagedIndexKeyIsReported(t *testing.T) {
	db := smallLog(t)
	defer db.Close()
	var key, value []byte
	db.View(func(tx *bolt.Tx) error {
		k, v := tx.Bucket(bucketWAL).Cursor().First()
		key, value = slices.Clone(k), slices.Clone(v)
		return nil
	})
	for bit := range len(key) * 8 {
		bad := slices.Clone(key)
		bad[bit/8] ^= 1 << (bit % 8)
		move := func(from, to []byte) {
			db.Update(func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketWAL)
				b.Delete(from)
				return b.Put(to, value)
			})
		}
		move(key, bad)
		for _, rd := range readers {
			if !rd.readsIndex {
				continue
			}
			err := readLog(db, rd.read, Log{})
			expectCorrupt(t, err, string(bucketWAL), bad)
		}
		move(bad, key)
	}
}

// TestChunksWrittenBeforeChecksumsReadOnlyBelowTheBoundary: a version 2
// chunk with a 32-byte index record (as schema 1 wrote them) reads when
// its number is below Log.LegacyBelow, and is refused at or above it.
func TestChunksWrittenBeforeChecksumsReadOnlyBelowTheBoundary(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	var b Batch
	want := []Entry{{Time: 4, Arrival: 1, Body: []byte("a")}, {Time: 6, Arrival: 2, Line: 9, Body: []byte("b")}}
	for _, e := range want {
		b.Add(e)
	}
	v2 := chunkV2Of(b.chunks[0].value(0, 5))
	db.Update(func(tx *bolt.Tx) error {
		wal, seq, _ := buckets(tx)
		seq.Put(binary.BigEndian.AppendUint64(nil, 5), v2)
		k := walKey(6, 5)
		return wal.Put(k, indexValue(k, index{4, 6, 0, 2, uint32(len(v2))})[:indexFields])
	})
	for _, rd := range readers {
		if err := readLog(db, rd.read, Log{LegacyBelow: 6}); err != nil {
			t.Fatalf("%s below the boundary: %v", rd.name, err)
		}
		err := readLog(db, rd.read, Log{LegacyBelow: 5})
		if !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("%s at the boundary: %v, want a corruption error", rd.name, err)
		}
	}
	got := collect(db, func(tx *bolt.Tx, fn func(*Entry) error) error { return Log{LegacyBelow: 6}.Scan(tx, 0, fn) })
	if !slices.EqualFunc(got, want, entryEqual) {
		t.Fatalf("read %+v", got)
	}
}

// TestCheckFindsChunksAndIndexRecordsWithoutTheirPair: a chunk nobody
// indexes, and an index record whose chunk is gone, are problems Check
// names; everything else still counts.
func TestCheckFindsChunksAndIndexRecordsWithoutTheirPair(t *testing.T) {
	db := smallLog(t)
	defer db.Close()
	db.Update(func(tx *bolt.Tx) error {
		wal, seq, _ := buckets(tx)
		k, _ := wal.Cursor().First() // chunk 0's
		wal.Delete(k)
		return seq.Delete(binary.BigEndian.AppendUint64(nil, 1))
	})
	var problems []*store.CorruptError
	var st CheckStats
	db.View(func(tx *bolt.Tx) error {
		st = Log{}.Check(tx, func(*Entry) error { return nil }, func(ce *store.CorruptError) { problems = append(problems, ce) })
		return nil
	})
	if len(problems) != 2 || problems[0].Bucket != "walseq" || problems[1].Bucket != "wal" ||
		binary.BigEndian.Uint64(problems[0].Key) != 0 || binary.BigEndian.Uint64(problems[1].Key[8:]) != 1 {
		t.Fatalf("problems %v", problems)
	}
	if st.Chunks != 1 || st.Indexed != 1 || st.Entries != 3 || st.Legacy != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestAnIndexKeyDamagedBelowTheScanIsReported: a flipped bit that moves an
// index record's time below the one Scan seeks to would hide its chunk
// (entries at or above that time) from the scan; Scan verifies the record
// before the first it visits, so it reports it, whether the hidden record
// is the last one or has others after it.
func TestAnIndexKeyDamagedBelowTheScanIsReported(t *testing.T) {
	for _, chunks := range []uint64{2, 3} {
		db := openTestDB(t, t.TempDir())
		for c := range chunks {
			var b Batch
			for i := range uint64(3) {
				b.Add(Entry{Time: 10*c + i, Arrival: 3*c + i, Body: []byte("m")})
			}
			db.Update(func(tx *bolt.Tx) error { _, err := b.Write(tx, c, c); return err })
		}
		good, bad := walKey(12, 1), walKey(4, 1) // bit 3 of the last time flipped
		db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketWAL)
			v := slices.Clone(b.Get(good))
			b.Delete(good)
			return b.Put(bad, v)
		})
		err := db.View(func(tx *bolt.Tx) error { return Log{}.Scan(tx, 5, func(*Entry) error { return nil }) })
		expectCorrupt(t, err, string(bucketWAL), bad)
		db.Close()
	}
}
