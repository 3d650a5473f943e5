package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestDamagedPageHeadersAreReportedNotCrashed: opening a database for
// writing makes bbolt walk every page; a damaged page header (its id, type
// or element count) made it panic or fault, which crashed the process
// instead of giving ErrCorrupt.
func TestDamagedPageHeadersAreReportedNotCrashed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(BucketWAL)
		for i := 0; i < 2000; i++ {
			if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(i)), []byte(fmt.Sprintf("entry %d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	good, _ := os.ReadFile(path)
	// The root page of the newest meta page (the one with the higher txid).
	newer, metas := newerMeta(t, good)
	pageSize, root := int(metas[newer].pageSize), int(metas[newer].root)
	for _, f := range []struct {
		name string
		off  int
		mask byte
	}{{"id", 0, 0x01}, {"flags", 8, 0x03}, {"count", 10, 0x40}} {
		t.Run(f.name, func(t *testing.T) {
			bad := append([]byte(nil), good...)
			bad[root*pageSize+f.off] ^= f.mask
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path, Options{})
			if err == nil {
				db.Close()
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

// newerMeta returns the index (0 or 1) of the meta page of the higher
// txid in the database file good, and both meta pages.
func newerMeta(t *testing.T, good []byte) (newer int, metas [2]boltMeta) {
	t.Helper()
	ps := os.Getpagesize()
	for i := range metas {
		m, ok := parseMeta(good[i*ps:])
		if !ok {
			t.Fatalf("meta page %d of the undamaged file does not validate", i)
		}
		metas[i] = m
	}
	if metas[1].txid > metas[0].txid {
		newer = 1
	}
	return newer, metas
}

// damageMeta flips a bit of meta page i's magic: bbolt then reads the
// other meta page.
func damageMeta(good []byte, i int) []byte {
	bad := append([]byte(nil), good...)
	bad[i*os.Getpagesize()+pageHeaderSize+3] ^= 0x20
	return bad
}

// TestACompactedFileWithADamagedMetaPageIsNotTakenForANewDatabase: a
// file compacted by plain bbolt (as cdclog gc wrote it before Replace
// committed twice) holds its one commit and the empty state the
// compaction started from. With the commit's meta page damaged, bbolt
// reads the empty state: Open took that for a new database, and a
// read-write Open created the schema in it, writing over everything
// committed (and read-only opens called it "not a cdclog database").
func TestACompactedFileWithADamagedMetaPageIsNotTakenForANewDatabase(t *testing.T) {
	dir := t.TempDir()
	path, compacted := filepath.Join(dir, "x.db"), filepath.Join(dir, "compacted.db")
	db, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		put(t, db, fmt.Sprintf("k%04d", i), fmt.Sprintf("value %d", i))
	}
	dst, err := bolt.Open(compacted, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bolt.Compact(dst, db.DB, 1<<20); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	db.Close()
	good, err := os.ReadFile(compacted)
	if err != nil {
		t.Fatal(err)
	}
	newer, metas := newerMeta(t, good)
	if older := metas[1-newer].txid; older > 1 {
		t.Fatalf("the compacted file's older meta page has txid %d, want the empty state's", older)
	}
	bad := damageMeta(good, newer)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{quiet(), {ReadOnly: true}, {NoCreate: true}} {
		db, err := Open(path, o)
		if err == nil {
			db.Close()
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("open %+v: %v, want ErrCorrupt", o, err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(bad) {
			t.Fatalf("open %+v wrote to the damaged file", o)
		}
	}
}

// TestAReplacedFileKeepsItsContentWithEitherMetaPageDamaged: Replace
// commits once more after the copy, so that bbolt's other meta page
// describes the whole copy too, not the empty state (or, for a large
// bolt.Compact, a part of the copy): one damaged meta page loses nothing.
func TestAReplacedFileKeepsItsContentWithEitherMetaPageDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	const keys = 3000
	err = db.Update(func(tx *bolt.Tx) error {
		for i := range keys {
			if err := tx.Bucket(BucketOutput).Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "value %d, long enough to take some pages", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A 16 KiB step makes bolt.Compact commit many times.
	if _, err := db.Replace(func(dst *bolt.DB) error { return bolt.Compact(dst, db.DB, 16<<10) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := os.WriteFile(path, damageMeta(good, i), 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("meta page %d damaged: %v", i, err)
		}
		var n int
		err = db.View(func(tx *bolt.Tx) error {
			n = tx.Bucket(BucketOutput).Stats().KeyN
			return nil
		})
		db.Close()
		if err != nil || n != keys {
			t.Fatalf("meta page %d damaged: %d keys (%v), want %d", i, n, err, keys)
		}
	}
}
