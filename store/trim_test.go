package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestAReplacedFileIsNoBiggerThanThePagesItUses: bbolt grows a file it
// writes from empty to its memory map's size (a power of two) and then by
// 16 MiB past what a commit needs; Replace cuts the copy to its
// high-water mark, so that compacting a file where nothing was dropped
// does not make it bigger than it was.
func TestAReplacedFileIsNoBiggerThanThePagesItUses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keys   int
		txSize int64
	}{
		{"a few keys", 10, 1 << 20},
		{"a few MiB in one commit", 30000, 64 << 20},
		{"a few MiB in many commits", 30000, 256 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			db, err := Open(path, quiet())
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error {
				for i := range tc.keys {
					if err := tx.Bucket(BucketOutput).Put(fmt.Appendf(nil, "k%08d", i), fmt.Appendf(nil, "value %d, long enough to take some room in a page", i)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			before, err := db.FileSize()
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.Replace(func(dst *bolt.DB) error { return bolt.Compact(dst, db.DB, tc.txSize) })
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			db, err = Open(path, Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("open the replaced file: %v", err)
			}
			defer db.Close()
			var used int64
			var n int
			err = db.View(func(tx *bolt.Tx) error {
				used, n = tx.Size(), tx.Bucket(BucketOutput).Stats().KeyN
				return nil
			})
			if err != nil || n != tc.keys {
				t.Fatalf("replaced file: %d keys (%v), want %d", n, err, tc.keys)
			}
			if fi.Size() != used || got != fi.Size() {
				t.Fatalf("replaced file is %d bytes (Replace said %d), its pages use %d", fi.Size(), got, used)
			}
			if fi.Size() > before {
				t.Fatalf("compacting grew the file from %d to %d bytes", before, fi.Size())
			}
		})
	}
}
