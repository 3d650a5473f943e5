package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cdclog/cdclog/internal/dirsync"
	bolt "go.etcd.io/bbolt"
)

// A database file is only ever put at its path whole: written under a
// temporary name in the same directory, synced, then linked (a new
// database) or renamed (a replacement, by the holder of the old file's
// lock) into place, and the directory synced. This file holds those
// steps.

// tempPrefix marks the temporary files of a database at path: path
// + ".cdclog-" + purpose + "-" + random + ".tmp".
const tempPrefix = ".cdclog-"

// staleAfter is how old a temporary file must be (by its modification
// time) before Open removes it as left behind by a process that died. A
// live process holds its temporary file locked and writes to it, except
// for the moments between bbolt closing it and the rename; an hour is far
// longer than that.
const staleAfter = time.Hour

// tempFile is a new, locked file under a name no other process uses.
type tempFile struct {
	f    *os.File
	name string // "" once it is no longer ours to remove
}

// newTemp creates a temporary file next to real, for purpose ("new",
// "gc", ...), and locks it before anything is written to it. A real
// without a directory is in the current one ("x.db" is "./x.db"), not in
// os.TempDir, which may be another file system: link and rename cannot
// cross file systems.
func newTemp(real, purpose string) (*tempFile, error) {
	dir, base := filepath.Split(real)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, base+tempPrefix+purpose+"-*.tmp")
	if err != nil {
		return nil, err
	}
	if ok, err := tryLock(f, true); !ok || err != nil {
		f.Close()
		os.Remove(f.Name())
		if err == nil {
			err = fmt.Errorf("lock %s: held by another process", f.Name())
		}
		return nil, err
	}
	return &tempFile{f: f, name: f.Name()}, nil
}

// discard removes the temporary file unless it was put in place, and
// closes it (bbolt may have closed it already).
func (t *tempFile) discard() {
	if t.name != "" {
		os.Remove(t.name)
	}
	t.f.Close()
}

// fill makes the temporary file a bbolt database holding what fn writes,
// cut to the pages it uses (see trimToUsed), synced to disk, and closes
// it. bbolt's first write (its meta pages) and every commit go to the
// temporary name, so no process ever sees them half done at the
// database's path.
func (t *tempFile) fill(fn func(*bolt.DB) error) (err error) {
	bdb, err := bolt.Open(t.name, 0o600, &bolt.Options{
		Timeout:      time.Second,
		NoSync:       true, // one sync at the end is enough: nothing reads it before
		FreelistType: bolt.FreelistMapType,
		OpenFile:     func(string, int, os.FileMode) (*os.File, error) { return t.f, nil },
	})
	if err != nil {
		return err
	}
	defer func() {
		if bdb == nil {
			return
		}
		if cerr := bdb.Close(); err == nil {
			err = cerr
		}
	}()
	if faulted, err := protect(func() error { return fn(bdb) }); err != nil {
		if faulted {
			// bbolt may hold its locks after a fault, and Close would
			// wait for them forever: close the file and leave the rest.
			t.f.Close()
			bdb = nil
		}
		return err
	}
	if err := trimToUsed(bdb, t.f); err != nil {
		return fmt.Errorf("trim the file to its used pages: %w", err)
	}
	// fsync, not bbolt's fdatasync: the file's new size is metadata.
	return t.f.Sync()
}

// trimToUsed cuts f, the file of bdb, to the pages bdb's last commit uses
// (bbolt's high-water mark, Tx.Size). bbolt grows a file it writes from
// empty to the size of its memory map, a power of two up to 16 MiB, and
// then by 16 MiB past what a commit needs: a compacted copy was up to
// twice as big as what it holds, or 16 MiB bigger, and so could be bigger
// than the file it replaced (47.5 MiB became 53.8 MiB, with nothing
// dropped). No page at or past the mark is read, and bbolt grows the file
// again (by its size on disk) when a later commit needs more. The mark
// never moves down, so the other meta page needs no more pages than this
// one. Nothing else uses bdb while fill runs. Should a crash lose the new
// size, the file is only longer than it needs, which bbolt accepts.
func trimToUsed(bdb *bolt.DB, f *os.File) error {
	var used int64
	if err := bdb.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil }); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() <= used {
		return nil
	}
	return f.Truncate(used)
}

// createFile puts a new database, its schema committed, at real, which must
// not exist. It returns errAgain when another process created one there
// first.
func createFile(real string, o *Options) error {
	t, err := newTemp(real, "new")
	if err != nil {
		return pathless(err) // the caller names the database
	}
	defer t.discard()
	if err := t.fill(func(bdb *bolt.DB) error { return bdb.Update(create) }); err != nil {
		return fmt.Errorf("create the database: %w", pathless(err))
	}
	// link(2) fails where rename(2) would replace: two processes creating
	// the database at once must not replace a file that one of them may
	// already have opened and written to.
	if err := os.Link(t.name, real); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errAgain
		}
		if !linkUnsupported(err) {
			return pathless(err)
		}
		// A file system without hard links (FAT, some network and FUSE
		// file systems): rename when nothing is there. Two processes
		// creating the database in the same instant can then race; on
		// the file systems cdclog is meant for, link is used.
		if _, err := os.Lstat(real); err == nil {
			return errAgain
		}
		if err := os.Rename(t.name, real); err != nil {
			return pathless(err)
		}
	}
	os.Remove(t.name)
	t.name = ""
	if o.NoSync {
		return nil
	}
	return SyncDir(filepath.Dir(real))
}

// linkUnsupported reports whether link failed because the file system
// has no hard links.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) ||
		errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS)
}

// replace puts a new database that fn fills at real, by rename, while the
// caller holds the lock on old, the file at real: so no process can be
// writing to the file it replaces, and a process that waited for old's
// lock finds another file at the path and opens that one. The new file
// takes old's mode and, as far as this process may give it, its owner.
// It returns the new file's size.
func replace(old *os.File, real, purpose string, fn func(*bolt.DB) error) (int64, error) {
	fi, err := old.Stat()
	if err != nil {
		return 0, err
	}
	if cur, err := os.Stat(real); err != nil || !os.SameFile(fi, cur) {
		return 0, fmt.Errorf("%s is no longer the file this process opened", real)
	}
	t, err := newTemp(real, purpose)
	if err != nil {
		return 0, err
	}
	defer t.discard()
	// One more commit, which changes nothing, follows fn's: bbolt keeps
	// two meta pages and reads the other when one is damaged, and after
	// fn alone the other would describe the empty file, or a part of what
	// fn copied (bolt.Compact commits in steps). After it both describe
	// all of it.
	err = t.fill(func(dst *bolt.DB) error {
		if err := fn(dst); err != nil {
			return err
		}
		return dst.Update(func(*bolt.Tx) error { return nil })
	})
	if err != nil {
		return 0, err
	}
	if err := keepOwnerAndMode(t.name, fi); err != nil {
		return 0, err
	}
	nfi, err := os.Stat(t.name)
	if err != nil {
		return 0, err
	}
	if err := os.Rename(t.name, real); err != nil {
		return 0, err
	}
	t.name = ""
	return nfi.Size(), SyncDir(filepath.Dir(real))
}

// keepOwnerAndMode gives the file at name the permissions of fi and, as
// far as this process may (see keepOwner), its owner and group.
func keepOwnerAndMode(name string, fi os.FileInfo) error {
	if err := keepOwner(name, fi); err != nil {
		return err
	}
	return os.Chmod(name, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}

// removeStale removes temporary files of the database at real that a
// process left behind when it died (a power loss or kill -9 during
// creation or gc): those older than staleAfter whose lock no one holds.
func removeStale(real string) {
	dir, base := filepath.Split(real)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, base+tempPrefix) || !strings.HasSuffix(name, ".tmp") {
			continue
		}
		if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < staleAfter {
			continue
		}
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if ok, _ := tryLock(f, true); ok {
			os.Remove(path)
		}
		f.Close()
	}
}

// SyncDir makes the directory's entries durable: a created or renamed
// file is not on disk until its directory is.
func SyncDir(dir string) error { return dirsync.Sync(dir) }

// pathless returns the error of a *fs.PathError without its path, for
// errors that Open prefixes with the database's path already.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// resolve follows path to the file it names when it is a symbolic link
// (to a file that may not exist yet), so that the database file is
// created, locked and replaced where the link points and the link stays.
func resolve(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}
