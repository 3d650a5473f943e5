package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// quiet is the Options of a test that expects no warnings.
func quiet() Options { return Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))} }

// put stores key = value in the output bucket.
func put(t *testing.T, db *DB, key, value string) {
	t.Helper()
	err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(BucketOutput).Put([]byte(key), []byte(value)) })
	if err != nil {
		t.Fatal(err)
	}
}

// get returns the value of key in the output bucket ("" when absent).
func get(t *testing.T, db *DB, key string) string {
	t.Helper()
	var v string
	err := db.View(func(tx *bolt.Tx) error { v = string(tx.Bucket(BucketOutput).Get([]byte(key))); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tempFiles returns the names of the temporary files in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.Contains(e.Name(), tempPrefix) {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestAnOpenWaitingForALockOpensTheFileThatReplacedIt: a writer and a
// reader wait for the lock that a holder keeps while it replaces the
// file by rename; when the holder closes, both must open the new file,
// never the old one whose lock they were waiting for.
func TestAnOpenWaitingForALockOpensTheFileThatReplacedIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	holder, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	put(t, holder, "which", "old")
	type result struct {
		db  *DB
		err error
	}
	results := make(chan result, 2)
	for _, ro := range []bool{false, true} {
		go func() {
			o := quiet()
			o.ReadOnly, o.LockTimeout = ro, 10*time.Second
			db, err := Open(path, o)
			results <- result{db, err}
		}()
	}
	time.Sleep(100 * time.Millisecond) // both are waiting, or opened the old file
	_, err = holder.Replace(func(dst *bolt.DB) error {
		if err := bolt.Compact(dst, holder.DB, 1<<20); err != nil {
			return err
		}
		return dst.Update(func(tx *bolt.Tx) error { return tx.Bucket(BucketOutput).Put([]byte("which"), []byte("new")) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Update(func(*bolt.Tx) error { return nil }); !errors.Is(err, ErrReplaced) {
		t.Fatalf("Update after Replace: %v, want ErrReplaced", err)
	}
	holder.Close()
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got := get(t, r.db, "which"); got != "new" {
			t.Errorf("read-only %v: opened the %s file", r.db.ReadOnly(), got)
		}
		if !current(r.db.file, path) {
			t.Errorf("read-only %v: the locked file is not the one at the path", r.db.ReadOnly())
		}
		r.db.Close()
	}
}

// TestConcurrentReplacesAndWritersLoseNothing: in-process, the race of
// gc loops and short writers that the command-line stress test runs with
// processes (flock locks conflict between open files of one process
// too): every acknowledged write is in the file at the end.
func TestConcurrentReplacesAndWritersLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	o := quiet()
	o.NoSync, o.LockTimeout = true, 30*time.Second
	db, err := Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var acked []string
	errs := make(chan error, 100)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				db, err := Open(path, o)
				if err != nil {
					errs <- err
					return
				}
				if _, err := db.Replace(func(dst *bolt.DB) error { return bolt.Compact(dst, db.DB, 1<<20) }); err != nil {
					errs <- err
				}
				db.Close()
			}
		}()
	}
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				db, err := Open(path, o)
				if err != nil {
					errs <- err
					return
				}
				key := fmt.Sprintf("w%d-%d", w, i)
				err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket(BucketOutput).Put([]byte(key), nil) })
				if cerr := db.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked = append(acked, key)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db, err = Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var lost []string
	db.View(func(tx *bolt.Tx) error {
		for _, k := range acked {
			if tx.Bucket(BucketOutput).Get([]byte(k)) == nil {
				lost = append(lost, k)
			}
		}
		return nil
	})
	if len(lost) > 0 || len(acked) == 0 {
		t.Fatalf("%d of %d acknowledged writes lost: %v", len(lost), len(acked), lost)
	}
	if names := tempFiles(t, filepath.Dir(path)); len(names) > 0 {
		t.Fatalf("temporary files left behind: %v", names)
	}
}

// TestConcurrentCreatorsShareOneDatabase: processes that find no file at
// the path each build a database under a temporary name; exactly one is
// linked into place, and every writer's key ends up in it.
func TestConcurrentCreatorsShareOneDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	o := quiet()
	o.LockTimeout = 30 * time.Second
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := Open(path, o)
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			errs <- db.Update(func(tx *bolt.Tx) error { return tx.Bucket(BucketOutput).Put([]byte{byte(i)}, nil) })
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket(BucketOutput).Stats().KeyN; n != 8 {
			t.Errorf("%d of 8 writers' keys in the database", n)
		}
		return nil
	})
	if names := tempFiles(t, filepath.Dir(path)); len(names) > 0 {
		t.Fatalf("temporary files left behind: %v", names)
	}
}

// TestLockTimeout: zero means the default wait, NoWait tries once, and
// the error says how long Open waited.
func TestLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	holder, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	for _, tc := range []struct {
		timeout   time.Duration
		min, max  time.Duration
		wantInErr string
	}{
		{NoWait, 0, 500 * time.Millisecond, "tried once, without waiting"},
		{-time.Hour, 0, 500 * time.Millisecond, "tried once, without waiting"},
		{300 * time.Millisecond, 300 * time.Millisecond, 2 * time.Second, "gave up after "},
		{0, DefaultLockTimeout, DefaultLockTimeout + 2*time.Second, "gave up after 3"},
	} {
		for _, ro := range []bool{false, true} {
			if tc.timeout == 0 && (ro || testing.Short()) {
				continue // 3 s: once is enough
			}
			start := time.Now()
			_, err := Open(path, Options{ReadOnly: ro, LockTimeout: tc.timeout})
			d := time.Since(start)
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Errorf("timeout %v, read-only %v: %v, want ErrLocked saying %q", tc.timeout, ro, err, tc.wantInErr)
			}
			if d < tc.min || d > tc.max {
				t.Errorf("timeout %v, read-only %v: gave up after %v", tc.timeout, ro, d)
			}
		}
	}
}

// TestOpenNamesTheDatabaseOnce: an error from the file system (here a
// missing directory) names the path once.
func TestOpenNamesTheDatabaseOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodir", "x.db")
	_, err := Open(path, quiet())
	if err == nil || strings.Count(err.Error(), path) != 1 || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want the path once and a missing file", err)
	}
	if want := "open " + path + ": no such file or directory"; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
}

// TestANewDatabaseIsSmallAndNoTemporaryFileRemains: Open creates the
// database whole (schema committed) under a temporary name and links it
// into place; a few small commits keep the file small (bbolt grows it in
// proportion to what it holds).
func TestANewDatabaseIsSmallAndNoTemporaryFileRemains(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.db")
	db, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		db.Update(func(tx *bolt.Tx) error {
			db.Reserve()
			return tx.Bucket(BucketWAL).Put([]byte{byte(i)}, bytes.Repeat([]byte("m"), 100))
		})
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 256<<10 {
		t.Fatalf("a database with 4 small entries is %d bytes", fi.Size())
	}
	if names := tempFiles(t, dir); len(names) > 0 {
		t.Fatalf("temporary files left behind: %v", names)
	}
	t.Logf("4 entries: %d bytes", fi.Size())
}

// TestARelativePathIsCreatedInTheCurrentDirectory: "x.db" gets its
// temporary file in the current directory, not in $TMPDIR (another file
// system, where link(2) fails with EXDEV, or here a directory that does
// not exist), and a replacement of it (gc's) does too.
func TestARelativePathIsCreatedInTheCurrentDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("TMPDIR", filepath.Join(dir, "missing"))
	db, err := Open("x.db", quiet())
	if err != nil {
		t.Fatalf("open a new database by a relative path: %v", err)
	}
	put(t, db, "k", "v")
	if _, err := db.Replace(func(dst *bolt.DB) error { return bolt.Compact(dst, db.DB, 1<<20) }); err != nil {
		t.Fatalf("replace a database opened by a relative path: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("x.db", quiet())
	if err != nil {
		t.Fatalf("reopen after the replacement: %v", err)
	}
	defer db.Close()
	if got := get(t, db, "k"); got != "v" {
		t.Fatalf("after the replacement: %q, want %q", got, "v")
	}
	if names := tempFiles(t, dir); len(names) > 0 {
		t.Fatalf("temporary files left behind: %v", names)
	}
}

func TestGrowthIsInProportionToTheFile(t *testing.T) {
	for _, tc := range []struct {
		hwm  int64
		want int
	}{{16 << 10, 64 << 10}, {1 << 20, 1 << 20}, {16 << 20, 16 << 20}, {1 << 30, 16 << 20}} {
		if got := growth(tc.hwm); got != tc.want {
			t.Errorf("growth(%d) = %d, want %d", tc.hwm, got, tc.want)
		}
	}
}

// TestStaleTemporaryFilesAreRemoved: a temporary file older than
// staleAfter that no one holds is left from a process that died, and a
// read-write Open removes it; a recent one, or one whose lock is held,
// is another process's, and stays.
func TestStaleTemporaryFilesAreRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.db")
	db, err := Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	old := time.Now().Add(-2 * staleAfter)
	mk := func(purpose string, age time.Time) string {
		name := filepath.Join(dir, "x.db"+tempPrefix+purpose+"-123.tmp")
		if err := os.WriteFile(name, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(name, age, age)
		return name
	}
	stale, fresh, held := mk("new", old), mk("replace", time.Now()), mk("gc", old)
	other := filepath.Join(dir, "y.db"+tempPrefix+"new-1.tmp") // another database's
	os.WriteFile(other, nil, 0o600)
	os.Chtimes(other, old, old)
	f, err := os.OpenFile(held, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := tryLock(f, true); !ok || err != nil {
		t.Fatal("cannot lock", err)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ro.Close()
	if _, err := os.Stat(stale); err != nil {
		t.Fatal("a read-only open removed a file")
	}
	db, err = Open(path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for name, want := range map[string]bool{stale: false, fresh: true, held: true, other: true} {
		if _, err := os.Stat(name); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(name), err == nil, want)
		}
	}
}
