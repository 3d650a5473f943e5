package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// within fails t unless fn returns within d: a hang is the failure these
// tests look for.
func within(t *testing.T, d time.Duration, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s: still waiting after %v", what, d)
		return nil
	}
}

// TestAFaultInAWriteTransactionStopsTheDatabaseWithoutAHang: when the
// file is cut short under an open database, bbolt's reads of its memory
// map fault; rolling the write transaction back faults again (it reads
// the free list from the map) and leaves bbolt's writer lock held, so
// bbolt's Close waited forever and the process never exited. Now the
// transaction's error says what happened, later calls fail at once, and
// Close returns promptly and releases the file's lock.
func TestAFaultInAWriteTransactionStopsTheDatabaseWithoutAHang(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	value := bytes.Repeat([]byte("v"), 1000)
	for batch := range 4 {
		err := db.Update(func(tx *bolt.Tx) error {
			db.Reserve()
			for i := range 2000 {
				if err := tx.Bucket(BucketWAL).Put(binary.BigEndian.AppendUint64(nil, uint64(batch<<20+i)), value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Truncate(path, 8192); err != nil {
		t.Fatal(err)
	}
	err = within(t, 10*time.Second, "Update on a file cut short", func() error {
		return db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(BucketWAL).Put(binary.BigEndian.AppendUint64(nil, 1<<40), value)
		})
	})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "cut to 8192 bytes while open") {
		t.Fatalf("Update: %v, want ErrCorrupt saying the file was cut", err)
	}
	for name, fn := range map[string]func() error{
		"Update": func() error { return db.Update(func(*bolt.Tx) error { return nil }) },
		"View":   func() error { return db.View(func(*bolt.Tx) error { return nil }) },
	} {
		if err := within(t, time.Second, name+" after the fault", fn); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s after the fault: %v, want the fault", name, err)
		}
	}
	if err := within(t, 10*time.Second, "Close after the fault", db.Close); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Close: %v, want the fault", err)
	}
	// The lock is released: the next open finds the damage, not a lock.
	if _, err := Open(path, Options{LockTimeout: NoWait}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open after Close: %v, want ErrCorrupt", err)
	}
}

// TestAFaultInAReadTransactionLeavesTheDatabaseUsable: a read that
// faults is rolled back by bbolt without touching the map; the database
// stays usable and closes normally.
func TestAFaultInAReadTransactionLeavesTheDatabaseUsable(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "x.db"), quiet())
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(*bolt.Tx) error {
		var p *int
		return errors.New(string(rune(*p))) // a nil dereference: a fault
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("View: %v, want ErrCorrupt", err)
	}
	put(t, db, "k", "v")
	if err := within(t, 10*time.Second, "Close", db.Close); err != nil {
		t.Fatal(err)
	}
}

// TestAFailedReplaceLeavesTheFileAndNoTemporaryFile: when filling the
// new file fails (an error or a fault), the old file stays in place and
// usable, and the temporary file is gone.
func TestAFailedReplaceLeavesTheFileAndNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.db")
	db, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "k", "v")
	for name, fn := range map[string]func(*bolt.DB) error{
		"error": func(*bolt.DB) error { return errors.New("disk full, say") },
		"panic": func(*bolt.DB) error { panic("a damaged page, say") },
	} {
		if _, err := db.Replace(fn); err == nil {
			t.Fatalf("%s: Replace succeeded", name)
		}
		if names := tempFiles(t, dir); len(names) > 0 {
			t.Fatalf("%s: temporary files left behind: %v", name, names)
		}
		if !current(db.file, path) {
			t.Fatalf("%s: the file was replaced", name)
		}
	}
	put(t, db, "k2", "v2")
	db.Close()
}
