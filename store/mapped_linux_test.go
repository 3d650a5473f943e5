//go:build linux

package store

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cdclog/cdclog/internal/proctest"
	bolt "go.etcd.io/bbolt"
)

func TestReleaseMappedDropsTouchedPagesAndKeepsDataReadable(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "x.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const values, size = 1024, 32 << 10 // 32 MiB
	value := func(i int) []byte { return bytes.Repeat(binary.BigEndian.AppendUint32(nil, uint32(i)), size/4) }
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(BucketOutput)
		for i := range values {
			if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(i)), value(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	readAll := func() {
		t.Helper()
		err := db.View(func(tx *bolt.Tx) error {
			n := 0
			return tx.Bucket(BucketOutput).ForEach(func(k, v []byte) error {
				if !bytes.Equal(v, value(n)) {
					t.Fatalf("value %d changed", n)
				}
				n++
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// In a write transaction, as a commit does, and in a read one, as a
	// walk over the WAL's index does.
	for _, in := range []struct {
		name string
		tx   func(func(*bolt.Tx) error) error
	}{{"Update", db.Update}, {"View", db.View}} {
		readAll() // maps every page of the file
		before := proctest.RssFileKiB(t)
		if err := in.tx(func(*bolt.Tx) error { return db.ReleaseMapped() }); err != nil {
			t.Fatal(in.name, err)
		}
		after := proctest.RssFileKiB(t)
		if before-after < 16<<10 {
			t.Fatalf("%s: RssFile %d KiB before the release, %d after: want at least 16 MiB less", in.name, before, after)
		}
		readAll() // the data comes back from the page cache, unchanged
	}
}

func TestReserveIsGivenBackOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		db.Reserve()
		return tx.Bucket(BucketOutput).Put([]byte("k"), bytes.Repeat([]byte("v"), 1<<20))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if used := fi.Sys().(*syscall.Stat_t).Blocks * 512; used > fi.Size()+64<<10 {
		t.Fatalf("%d bytes of disk for a %d-byte file after Close", used, fi.Size())
	}
	db, err = Open(path, Options{ReadOnly: true}) // still a good database
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}
