package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestOpenCreatesTheSchemaAndReopens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		for _, b := range allBuckets() {
			if tx.Bucket(b) == nil {
				t.Errorf("bucket %s missing", b)
			}
		}
		if Schema(tx) != SchemaVersion || Created(tx) == "" {
			t.Errorf("schema %d created %q", Schema(tx), Created(tx))
		}
		return nil
	})
	db.Close()
	db, err = Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reopen read-only: %v", err)
	}
	db.Close()
}

func TestOpenRefusesForeignFilesWithoutWritingToThem(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("this is not a database\n"), 0o600)
	big := filepath.Join(dir, "random.bin")
	junk := make([]byte, 64<<10)
	for i := range junk {
		junk[i] = byte(i * 7)
	}
	os.WriteFile(big, junk, 0o600)
	// Between one and two pages long: bbolt alone says "file size too small".
	var pageish []string
	for _, n := range []int{os.Getpagesize(), os.Getpagesize() + 813, 2*os.Getpagesize() - 1} {
		p := filepath.Join(dir, fmt.Sprintf("text-%d.jsonl", n))
		os.WriteFile(p, bytes.Repeat([]byte("{\"update\":{}}\n"), n)[:n], 0o600)
		pageish = append(pageish, p)
	}
	other := filepath.Join(dir, "other.db")
	bdb, _ := bolt.Open(other, 0o600, nil)
	bdb.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("users")); return err })
	bdb.Close()
	for _, path := range append([]string{text, big, other}, pageish...) {
		before, _ := os.ReadFile(path)
		for _, ro := range []bool{false, true} {
			_, err := Open(path, Options{ReadOnly: ro})
			if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "not a cdclog database") {
				t.Errorf("%s (read-only %v): got %v, want ErrForeign", filepath.Base(path), ro, err)
			}
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Errorf("%s was modified", path)
		}
	}
}

func TestOpenRefusesANewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, _ := Open(path, Options{})
	db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(BucketMeta).Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, SchemaVersion+1))
	})
	db.Close()
	if _, err := Open(path, Options{}); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("got %v, want ErrNewerSchema", err)
	}
}

func TestSecondOpenGetsALockErrorWithinTheTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, ro := range []bool{false, true} {
		start := time.Now()
		_, err := Open(path, Options{ReadOnly: ro, LockTimeout: 200 * time.Millisecond})
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("read-only %v: got %v, want ErrLocked", ro, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %v", d)
		}
	}
}

func TestReadOnlyOpenOfAMissingFileFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrNotExist) {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("read-only open created the file")
	}
}

func TestCorruptMetaPagesAreReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, _ := Open(path, Options{})
	db.Close()
	b, _ := os.ReadFile(path)
	for _, off := range []int{16 + 40, 4096 + 16 + 40} { // both meta pages' bodies
		b[off] ^= 0xff
	}
	os.WriteFile(path, b, 0o600)
	_, err := Open(path, Options{})
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrForeign) {
		t.Fatalf("got %v, want a corruption error", err)
	}
}
