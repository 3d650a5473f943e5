package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	bolt "go.etcd.io/bbolt"
)

// finishedDB ingests a small stream into dir/state.db with --out
// dir/out.jsonl and returns the paths and the clean stream.
func finishedDB(t *testing.T, dir string) (in, db, out string, want []byte) {
	t.Helper()
	in, want = smallStream(t, dir)
	db, out = filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	mustRunBin(t, nil, "ingest", "--db", db, "--out", out, in)
	return in, db, out, want
}

// boltMeta describes the meta pages of a bbolt file.
type boltMeta struct {
	pageSize int
	newest   int // 0 or 1: the meta page with the higher transaction id
	root     int // root page of the newest meta
}

func readBoltMeta(t *testing.T, b []byte) boltMeta {
	t.Helper()
	// A meta page: a 16-byte page header, then magic, version, page size,
	// flags (4 bytes each), root bucket (root page, sequence), freelist,
	// high water mark, txid (8 bytes each), checksum.
	m := boltMeta{pageSize: int(binary.LittleEndian.Uint32(b[16+8:]))}
	meta := func(i int) []byte { return b[i*m.pageSize+16:] }
	if binary.LittleEndian.Uint64(meta(1)[48:]) > binary.LittleEndian.Uint64(meta(0)[48:]) {
		m.newest = 1
	}
	m.root = int(binary.LittleEndian.Uint64(meta(m.newest)[16:]))
	return m
}

// bucketRoot returns the root page of a bucket that is not inline.
func bucketRoot(t *testing.T, path string, name []byte) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var root int
	db.View(func(tx *bolt.Tx) error {
		root = int(tx.Bucket(name).Root())
		return nil
	})
	if root == 0 {
		t.Fatalf("bucket %s is inline", name)
	}
	return root
}

// TestIngestReportsADamagedDatabaseAndLeavesItAsItWas: with both meta
// pages damaged, or the header of the root page or of the write-ahead
// log's root page damaged, ingest exits 1 with "database is corrupt", no
// crash, and writes nothing to the database or the output file; a
// read-only open reports the damage as an error too.
func TestIngestReportsADamagedDatabaseAndLeavesItAsItWas(t *testing.T) {
	dir := t.TempDir()
	in, db, out, want := finishedDB(t, dir)
	good := readFile(t, db)
	m := readBoltMeta(t, good)
	walRoot := bucketRoot(t, db, []byte("wal"))
	for _, tc := range []struct {
		name  string
		flips []int // byte offsets, each XORed with 0xff
	}{
		{"both meta pages", []int{16 + 40, m.pageSize + 16 + 40}},
		{"root page type", []int{m.root*m.pageSize + 8}},
		{"root page element count", []int{m.root*m.pageSize + 11}},
		{"write-ahead log page type", []int{walRoot*m.pageSize + 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := append([]byte(nil), good...)
			for _, off := range tc.flips {
				bad[off] ^= 0xff
			}
			if err := os.WriteFile(db, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(db, good, 0o600)
			expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, "--out", out, in}, "database is corrupt", db)
			if !bytes.Equal(readFile(t, db), bad) {
				t.Error("the damaged database was written to")
			}
			if !bytes.Equal(readFile(t, out), want) {
				t.Error("the output file was changed")
			}
			r, err := recovery.OpenReader(db, 0)
			if err == nil {
				_, err = r.Status()
				r.Close()
			}
			if !errors.Is(err, recovery.ErrCorrupt) {
				t.Errorf("a read-only open and status: %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestIngestSurvivesATornMetaPage: when the newest meta page is damaged
// (a torn write of the last commit), bbolt falls back to the previous
// commit; the rerun cuts the output back to it, redoes the last batch and
// ends byte-identical to an uninterrupted run.
func TestIngestSurvivesATornMetaPage(t *testing.T) {
	dir := t.TempDir()
	in, db, out, want := finishedDB(t, dir)
	b := readFile(t, db)
	m := readBoltMeta(t, b)
	b[m.newest*m.pageSize+16+40] ^= 0xff
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	mustRunBin(t, nil, "ingest", "--db", db, "--out", out, in)
	if got := readFile(t, out); !bytes.Equal(got, want) {
		t.Fatalf("output after the rerun: %s", firstDifference(got, want))
	}
}

// TestIngestReportsAReadOnlyDirectory: a database or output file to be
// created in a read-only directory gives a clear error naming the file
// and exit code 1, and nothing is created. As root, whom permissions do
// not stop, the directory is a read-only tmpfs mount.
func TestIngestReportsAReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 3, Times: 100})
	var ro, why string
	if os.Geteuid() == 0 {
		ro, why = mountTmpfs(t, "ro,size=1m"), "read-only file system"
	} else {
		ro, why = filepath.Join(dir, "ro"), "permission denied"
		os.Mkdir(ro, 0o555)
	}
	db, out := filepath.Join(ro, "state.db"), filepath.Join(ro, "out.jsonl")
	expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, "--out", filepath.Join(dir, "out.jsonl"), in}, db, why)
	expectFailure(t, exitFailure, nil, []string{"ingest", "--db", filepath.Join(dir, "state.db"), "--out", out, in}, "out.jsonl", why)
	expectFailure(t, exitFailure, nil, []string{"ingest", "--db", db, in}, db, why)
	entries, _ := os.ReadDir(ro)
	if len(entries) > 0 {
		t.Fatalf("files were created in the read-only directory: %v", entries)
	}
}

// TestIngestStopsCleanlyWhenTheDiskIsFull: with the database, or only the
// output file, on a filesystem that fills up (a small tmpfs), ingest
// stops with exit code 1 and an error naming the full disk; what it
// committed stays committed and the database opens; a rerun with space
// available again (the filesystem grown, or the database copied
// elsewhere with a new output file) completes, byte-identical to an
// uninterrupted run.
func TestIngestStopsCleanlyWhenTheDiskIsFull(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeTestStream(t, in, cdc.JSONL, streamSpec{Seed: 5, Times: 45_000})
	want := inMemoryClean(t, in, cdc.JSONL)
	full := func(t *testing.T, db, out string) {
		t.Helper()
		args := []string{"ingest", "--db", db, "--out", out, in}
		expectFailure(t, exitFailure, nil, args, "no space left on device")
		s := dbStatus(t, db)
		got := readFile(t, out)
		if !bytes.HasPrefix(want, got) || s.OutputFileBytes > int64(len(got)) {
			t.Fatalf("after the failure the output file (%d bytes, %d committed) is not a prefix of the clean stream at least as long as what was committed",
				len(got), s.OutputFileBytes)
		}
		// The output log holds every committed record; the file's
		// committed size may lag it by the batches whose bytes were not
		// yet fsynced, which the next open adopts or writes again.
		if stored := storedOutput(t, db, cdc.JSONL); !bytes.HasPrefix(want, stored) || int64(len(stored)) < s.OutputFileBytes {
			t.Fatalf("the stored output log (%d bytes) is not a prefix of the clean stream at least as long as the file's committed %d bytes",
				len(stored), s.OutputFileBytes)
		}
		t.Logf("stopped with %d of %d output bytes committed", s.OutputFileBytes, len(want))
		// Still full: a rerun fails as cleanly.
		expectFailure(t, exitFailure, nil, args, "no space left on device")
	}

	t.Run("database and output, then more space", func(t *testing.T) {
		mnt := mountTmpfs(t, "size=8m")
		db, out := filepath.Join(mnt, "state.db"), filepath.Join(mnt, "out.jsonl")
		full(t, db, out)
		growTmpfs(t, mnt, "256m")
		mustRunBin(t, nil, "ingest", "--db", db, "--out", out, in)
		if got := readFile(t, out); !bytes.Equal(got, want) {
			t.Fatalf("after the rerun: %s", firstDifference(got, want))
		}
	})

	t.Run("database and output, then copied elsewhere", func(t *testing.T) {
		mnt := mountTmpfs(t, "size=8m")
		db, out := filepath.Join(mnt, "state.db"), filepath.Join(mnt, "out.jsonl")
		full(t, db, out)
		moved, newOut := filepath.Join(t.TempDir(), "state.db"), filepath.Join(t.TempDir(), "out.jsonl")
		if err := os.WriteFile(moved, readFile(t, db), 0o600); err != nil {
			t.Fatal(err)
		}
		// A new output file receives the committed output, then the rest.
		mustRunBin(t, nil, "ingest", "--db", moved, "--out", newOut, in)
		if got := readFile(t, newOut); !bytes.Equal(got, want) {
			t.Fatalf("after the rerun elsewhere: %s", firstDifference(got, want))
		}
	})

	t.Run("output only, then more space", func(t *testing.T) {
		mnt := mountTmpfs(t, "size=4m")
		db, out := filepath.Join(t.TempDir(), "state.db"), filepath.Join(mnt, "out.jsonl")
		full(t, db, out)
		growTmpfs(t, mnt, "256m")
		mustRunBin(t, nil, "ingest", "--db", db, "--out", out, in)
		if got := readFile(t, out); !bytes.Equal(got, want) {
			t.Fatalf("after the rerun: %s", firstDifference(got, want))
		}
	})
}
