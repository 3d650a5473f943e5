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
	pageSize := int(binary.LittleEndian.Uint32(good[16+8:]))
	meta := func(i int) []byte { return good[i*pageSize+16:] }
	m := meta(0)
	if binary.LittleEndian.Uint64(meta(1)[48:]) > binary.LittleEndian.Uint64(m[48:]) {
		m = meta(1)
	}
	root := int(binary.LittleEndian.Uint64(m[16:]))
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

// TestACompactedFileWithADamagedMetaPageIsNotTakenForANewDatabase: a
// compacted file's meta pages hold its one commit and the empty state the
// compaction started from. With the commit's meta page damaged, bbolt
// reads the empty state: Open took that for a new database, and a
// read-write Open created the schema in it, writing over everything
// committed (and read-only opens called it "not a cdclog database").
func TestACompactedFileWithADamagedMetaPageIsNotTakenForANewDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		put(t, db, fmt.Sprintf("k%04d", i), fmt.Sprintf("value %d", i))
	}
	if _, err := db.Replace(func(dst *bolt.DB) error { return bolt.Compact(dst, db.DB, 1<<20) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	txid := func(page int) uint64 { return binary.NativeEndian.Uint64(good[page*ps+pageHeaderSize+48:]) }
	newer := 0
	if txid(1) > txid(0) {
		newer = 1
	}
	if older := txid(1 - newer); older > 1 {
		t.Fatalf("the compacted file's older meta page has txid %d, want the empty state's", older)
	}
	bad := append([]byte(nil), good...)
	bad[newer*ps+pageHeaderSize+3] ^= 0x20 // the magic: bbolt falls back on the other page
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
