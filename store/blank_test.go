package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// logged returns Options whose logger writes into the returned buffer.
func logged() (Options, *bytes.Buffer) {
	var b bytes.Buffer
	return Options{Logger: slog.New(slog.NewTextHandler(&b, nil))}, &b
}

// bboltInit returns the bytes of a file that bbolt created and no
// transaction has committed to.
func bboltInit(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "init.db")
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	bdb.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInitImageIsWhatBboltWritesFirst(t *testing.T) {
	if got, want := initImage(os.Getpagesize()), bboltInit(t); !bytes.Equal(got, want) {
		t.Fatalf("initImage differs from bbolt's first write (%d and %d bytes)", len(got), len(want))
	}
}

// zeroed returns b with [from, to) set to zero.
func zeroed(b []byte, from, to int) []byte {
	c := append([]byte(nil), b...)
	clear(c[from:min(to, len(c))])
	return c
}

// TestOpenOnAFileWithNoCommittedState: a power loss while a database was
// being created (by an earlier cdclog, which let bbolt write its first
// pages at the path) leaves an empty file, part of bbolt's first write,
// or that write with no transaction after it. Such a file holds nothing
// committed: a read-write Open replaces it with a new database and logs
// why; a read-only or NoCreate Open finds no database. None of them is
// refused forever, as bbolt refused them ("Page expected to be: 3, but
// self identifies as 0", "invalid freelist page").
func TestOpenOnAFileWithNoCommittedState(t *testing.T) {
	init := bboltInit(t)
	ps := os.Getpagesize()
	cases := map[string][]byte{
		"empty":                         nil,
		"all zeros, 4 pages":            make([]byte, 4*ps),
		"first write, page 2 zeroed":    zeroed(init, 2*ps, 3*ps),
		"first write, page 3 zeroed":    zeroed(init, 3*ps, 4*ps),
		"first write, pages 2-3 zeroed": zeroed(init, 2*ps, 4*ps),
		"first write, meta 0 zeroed":    zeroed(init, 0, ps),
		"first write, meta 1 zeroed":    zeroed(init, ps, 2*ps),
		"first write, a sector kept":    zeroed(init, 512, len(init)),
		"first write cut at 1 KiB":      init[:1024],
		"first write cut at 1.5 pages":  init[:ps+ps/2],
		"first write, complete":         init,
		// Both meta pages still say that no transaction committed,
		// whatever else the file holds.
		"first write, page 3 overwritten": append(init[:4*ps-10:4*ps-10], "0123456789"...),
		"first write, then a 5th page":    append(init[:4*ps:4*ps], bytes.Repeat([]byte{7}, ps)...),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.db")
			if err := os.WriteFile(path, content, 0o640); err != nil {
				t.Fatal(err)
			}
			for _, o := range []Options{{ReadOnly: true}, {NoCreate: true}} {
				_, err := Open(path, o)
				if !errors.Is(err, ErrNotExist) || !strings.Contains(err.Error(), "no committed cdclog state") {
					t.Errorf("%+v: got %v, want ErrNotExist", o, err)
				}
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
				t.Fatal("a read-only or NoCreate open changed the file")
			}
			o, log := logged()
			db, err := Open(path, o)
			if err != nil {
				t.Fatal(err)
			}
			put(t, db, "k", "v")
			db.Close()
			if !strings.Contains(log.String(), "holds no committed state") {
				t.Errorf("the log does not say the file was replaced: %q", log.String())
			}
			fi, _ := os.Stat(path)
			if fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the file's 0640", fi.Mode())
			}
			db, err = Open(path, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if get(t, db, "k") != "v" {
				t.Fatal("the new database lost its write")
			}
			if names := tempFiles(t, dir); len(names) > 0 {
				t.Fatalf("temporary files left behind: %v", names)
			}
		})
	}
}

// committedDB returns the bytes of a cdclog database holding n entries.
func committedDB(t *testing.T, n int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if n == 0 {
			return errors.New("schema only: no commit")
		}
		for i := range n {
			if err := tx.Bucket(BucketWAL).Put(binary.BigEndian.AppendUint64(nil, uint64(i)), []byte(fmt.Sprint("entry ", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && n > 0 {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenNeverTakesADamagedDatabaseForABlankOne: a database that has
// committed anything, however damaged, and a small file that is not
// bbolt's, are never replaced: Open fails (or opens what bbolt can still
// read) and leaves the file as it was.
func TestOpenNeverTakesADamagedDatabaseForABlankOne(t *testing.T) {
	good := committedDB(t, 2000)
	ps := int(binary.NativeEndian.Uint32(good[pageHeaderSize+8:]))
	schemaOnly := committedDB(t, 0)
	text := []byte("this is not a database\n")
	nearlyZero := make([]byte, 4*ps)
	nearlyZero[100] = 1
	cases := map[string][]byte{
		"both meta pages zeroed":          zeroed(good, 0, 2*ps),
		"both meta pages zeroed, no data": zeroed(schemaOnly, 0, 2*ps),
		"meta 0 zeroed":                   zeroed(good, 0, ps),
		"meta 1 zeroed":                   zeroed(good, ps, 2*ps),
		"pages 2 and 3 zeroed":            zeroed(good, 2*ps, 4*ps),
		"cut to 4 pages":                  good[:4*ps],
		"cut to 4 pages, metas zeroed":    zeroed(good[:4*ps], 0, 2*ps),
		"text":                            text,
		"4 pages of zeros but one byte":   nearlyZero,
		"schema only, page 4 onward gone": schemaOnly[:4*ps],
		// The schema's commit (txid 2) damaged: bbolt falls back to the
		// first write (txid 1), an empty database, which a read-write
		// open gives its schema in place. With page 3 (the first write's
		// root) damaged too, bbolt cannot read that either: nothing
		// proves that what txid 2 committed was only cdclog's schema (a
		// foreign bbolt file looks the same), so it stays refused.
		"schema only, meta 0 zeroed":       zeroed(schemaOnly, 0, ps),
		"schema only, meta 0 and 3 zeroed": zeroed(zeroed(schemaOnly, 0, ps), 3*ps, 4*ps),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Stat(path)
			for _, o := range []Options{{ReadOnly: true}, {NoCreate: true}, {}} {
				o.Logger = slog.New(slog.DiscardHandler)
				db, err := Open(path, o)
				if errors.Is(err, ErrNotExist) {
					t.Fatalf("%+v: %v: a damaged database taken for a blank one", o, err)
				}
				if err == nil {
					db.Close()
				}
				after, _ := os.Stat(path)
				if !os.SameFile(before, after) {
					t.Fatalf("%+v: the file was replaced (%v)", o, err)
				}
				if o.ReadOnly || err != nil {
					if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
						t.Fatalf("%+v: the file was written to (%v)", o, err)
					}
				}
				t.Logf("%+v: %v", o, err)
			}
		})
	}
}

// TestOpenRefusesAFileShorterThanItsHighWaterMark: a database cut below
// the end of the pages its last commit uses is corrupt, for reading and
// for writing, and is not written to.
func TestOpenRefusesAFileShorterThanItsHighWaterMark(t *testing.T) {
	good := committedDB(t, 5000)
	ps := int(binary.NativeEndian.Uint32(good[pageHeaderSize+8:]))
	m0, _ := parseMeta(good)
	m1, _ := parseMeta(good[ps:])
	hwm := int(max(m0.pgid, m1.pgid)) * ps
	if hwm > len(good) || hwm < 8*ps {
		t.Fatalf("high-water mark %d, file %d bytes", hwm, len(good))
	}
	for _, size := range []int{hwm - 1, hwm - ps, 6 * ps} {
		path := filepath.Join(t.TempDir(), "x.db")
		os.WriteFile(path, good[:size], 0o600)
		for _, ro := range []bool{false, true} {
			_, err := Open(path, Options{ReadOnly: ro})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "shorter than") {
				t.Errorf("cut to %d of %d, read-only %v: got %v, want ErrCorrupt", size, hwm, ro, err)
			}
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, good[:size]) {
			t.Fatalf("cut to %d: the file was written to", size)
		}
	}
	path := filepath.Join(t.TempDir(), "x.db")
	os.WriteFile(path, good[:hwm], 0o600)
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("cut exactly at the high-water mark: %v", err)
	}
	db.Close()
}

// TestANewDatabaseSurvivesItsFirstPagesZeroed: a database as Open
// creates it (bbolt's first write and the schema's commit) no longer
// needs pages 2 and 3, the first write's free list and root: zeroing
// them leaves it usable.
func TestANewDatabaseSurvivesItsFirstPagesZeroed(t *testing.T) {
	schemaOnly := committedDB(t, 0)
	ps := int(binary.NativeEndian.Uint32(schemaOnly[pageHeaderSize+8:]))
	for _, page := range []int{2, 3} {
		path := filepath.Join(t.TempDir(), "x.db")
		os.WriteFile(path, zeroed(schemaOnly, page*ps, (page+1)*ps), 0o600)
		for _, ro := range []bool{true, false} {
			db, err := Open(path, Options{ReadOnly: ro})
			if err != nil {
				t.Fatalf("page %d zeroed, read-only %v: %v", page, ro, err)
			}
			if !ro {
				put(t, db, "k", "v")
			}
			db.Close()
		}
	}
}
