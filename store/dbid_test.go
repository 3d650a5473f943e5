package store

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func readID(t *testing.T, path string, ro bool) string {
	t.Helper()
	db, err := Open(path, Options{ReadOnly: ro})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	db.View(func(tx *bolt.Tx) error { id = ID(tx); return nil })
	return id
}

func TestDatabaseIDIsWrittenAtCreationAndNeverChanges(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	idA := readID(t, a, false)
	if len(idA) != 32 {
		t.Fatalf("id %q, want 32 hex characters", idA)
	}
	if again := readID(t, a, false); again != idA {
		t.Errorf("reopened: id %q, was %q", again, idA)
	}
	if ro := readID(t, a, true); ro != idA {
		t.Errorf("read-only: id %q, was %q", ro, idA)
	}
	if idB := readID(t, b, false); idB == idA {
		t.Errorf("two databases share id %q", idA)
	}
	if got, err := ReadID(a, Options{}); err != nil || got != idA {
		t.Errorf("ReadID = %q, %v; want %q", got, err, idA)
	}
}

func TestDatabaseIDIsAddedToAnOlderDatabaseByEnsureIDOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket(BucketMeta).Delete(idKey) }) // as made before ids
	db.Close()
	if id := readID(t, path, true); id != "" {
		t.Fatalf("read-only open wrote an id: %q", id)
	}
	if id := readID(t, path, false); id != "" {
		t.Fatalf("a read-write open wrote an id before its caller's checks: %q", id)
	}
	id, err := ReadID(path, Options{})
	if err != nil || len(id) != 32 {
		t.Fatalf("ReadID = %q, %v", id, err)
	}
	if again := readID(t, path, false); again != id {
		t.Errorf("id changed from %q to %q", id, again)
	}
}
