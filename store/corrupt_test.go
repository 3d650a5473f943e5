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
