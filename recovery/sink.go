package recovery

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cdclog/cdclog/internal/prealloc"
	"github.com/cdclog/cdclog/store"
)

// Sink is the exactly-once output file. It is an interface so that tests
// can inject write and sync failures, or drop unsynced bytes to simulate a
// power loss.
type Sink interface {
	io.Writer
	// ReaderAt reads back what the file holds, so that Open can check that
	// the committed bytes are the ones this database wrote before it
	// writes after them or cuts what follows them.
	io.ReaderAt
	// Sync makes everything written so far durable.
	Sync() error
	// Size returns the current length of the file.
	Size() (int64, error)
	// Truncate cuts the file to size and positions writes at its end.
	Truncate(size int64) error
	Close() error
}

// inoder is implemented by a Sink that knows its file's identity (FileSink
// does): Open records it, and does not take bytes past the committed size
// in a file that is no longer the one it wrote for output of its own.
type inoder interface {
	Inode() uint64
}

// creator is implemented by a Sink that knows whether opening it created
// its file (FileSink does), so that Open can say a committed file is
// missing rather than empty.
type creator interface {
	Created() bool
}

// FileSinkOptions configure OpenFileSink. The zero value works.
type FileSinkOptions struct {
	// LockTimeout bounds the wait for another process's lock on the file;
	// zero means store.DefaultLockTimeout.
	LockTimeout time.Duration
}

// FileSink is a Sink on a regular file, locked (flock, exclusive) from
// open to close so that two processors never write one file. It reserves
// disk space ahead of the file's end (see package prealloc), which makes
// its fsyncs much cheaper, and gives back what is left of the reservation
// when closed.
type FileSink struct {
	f       *os.File
	path    string // as opened, for messages and to see it replaced
	size    int64  // the write position: the file's length
	ahead   *prealloc.Ahead
	created bool
	ino     uint64
}

// OpenFileSink opens the output file at path for appending, creating it if
// needed (and then fsyncing its directory, so that the file survives a
// power loss once a checkpoint names it), and locks it. Another process
// holding the lock makes it fail with ErrSinkLocked after o.LockTimeout.
//
// A path that is not a regular file is refused with ErrSinkStream, as is a
// path under /dev or /proc even when it leads to one (/dev/stdout
// redirected to a file, /proc/self/fd/N): those name another process's
// stream, which an exactly-once sink would cut. Write such output as a
// stream instead (Options.Live).
func OpenFileSink(path string, o FileSinkOptions) (*FileSink, error) {
	if err := notAStream(path); err != nil {
		return nil, err
	}
	f, created, err := openOrCreate(path)
	if err != nil {
		return nil, fmt.Errorf("open output file: %w", err)
	}
	s, err := newFileSink(f, path, created, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func newFileSink(f *os.File, path string, created bool, o FileSinkOptions) (*FileSink, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open output file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is %s", ErrSinkStream, path, fileKind(fi.Mode()))
	}
	timeout := o.LockTimeout
	switch {
	case timeout == store.NoWait:
		timeout = 0 // one try
	case timeout <= 0:
		timeout = store.DefaultLockTimeout
	}
	if err := lockFile(f, timeout); err != nil {
		return nil, fmt.Errorf("output file %s: %w", path, err)
	}
	if created {
		if err := store.SyncDir(filepath.Dir(path)); err != nil {
			return nil, fmt.Errorf("output file %s: fsync its directory: %w", path, err)
		}
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("open output file: %w", err)
	}
	return &FileSink{f: f, path: path, size: size, ahead: prealloc.New(f), created: created, ino: inode(fi)}, nil
}

// notAStream refuses a path that names a stream: an existing file that is
// not a regular file, or a process's file descriptor (/dev/stdout,
// /dev/fd/N, /proc/PID/fd/N, or a symbolic link to one), which may lead to
// a regular file that another program writes (a shell's `>> log`).
func notAStream(path string) error {
	if fd, ok := descriptorName(path); ok {
		return fmt.Errorf("%w: %s names file descriptor %s", ErrSinkStream, path, fd)
	}
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return fmt.Errorf("%w: %s is %s", ErrSinkStream, path, fileKind(fi.Mode()))
	}
	return nil
}

// descriptorName reports whether path, or a symbolic link it leads
// through, names a file descriptor, and which.
func descriptorName(path string) (string, bool) {
	p := path
	for range 40 { // the kernel's limit on links followed
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", false
		}
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(dir, filepath.Base(abs))
		}
		if fd, ok := descriptorPath(abs); ok {
			return fd, true
		}
		target, err := os.Readlink(abs)
		if err != nil {
			return "", false // not a link: the end of the chain
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(abs), target)
		}
		p = target
	}
	return "", false
}

// descriptorPath recognises the names of file descriptors: /dev/stdin,
// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/PID/fd/N.
func descriptorPath(abs string) (string, bool) {
	switch abs {
	case "/dev/stdin":
		return "0", true
	case "/dev/stdout":
		return "1", true
	case "/dev/stderr":
		return "2", true
	}
	if fd, ok := strings.CutPrefix(abs, "/dev/fd/"); ok {
		return fd, true
	}
	if rest, ok := strings.CutPrefix(abs, "/proc/"); ok {
		if _, fd, ok := strings.Cut(rest, "/fd/"); ok && !strings.Contains(fd, "/") {
			return fd, true
		}
	}
	return "", false
}

// fileKind names a file type for errors.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// openOrCreate opens path read-write, creating it when missing; created
// says whether this call made it.
func openOrCreate(path string) (f *os.File, created bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	if !errors.Is(err, fs.ErrNotExist) {
		return f, false, err
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		// Created meanwhile, or a dangling symbolic link, which O_EXCL
		// refuses to follow.
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	}
	return f, err == nil, err
}

// Created reports whether OpenFileSink created the file.
func (s *FileSink) Created() bool { return s.created }

// Inode returns the file's inode number (0 where unknown).
func (s *FileSink) Inode() uint64 { return s.ino }

// Write appends p to the file. It first checks that the file is still
// the one at its path and ends where this sink's writes left it: a file
// that another program appended to, cut or replaced while it was open is
// not written (ErrSinkExcess, ErrSinkShort, ErrSinkChanged), so that
// another program's bytes are never overwritten, no hole is left where
// bytes were cut, and no output goes to a file no longer at the path.
func (s *FileSink) Write(p []byte) (int, error) {
	if err := s.unchanged(); err != nil {
		return 0, err
	}
	s.ahead.Ensure(s.size + int64(len(p)))
	n, err := s.f.Write(p)
	s.size += int64(n)
	return n, err
}

// unchanged reports, as an error, another program's change to the open
// file: its length is not what this sink wrote, or another file (or none)
// is at its path.
func (s *FileSink) unchanged() error {
	fi, err := s.f.Stat()
	if err != nil {
		return err
	}
	switch n := fi.Size(); {
	case n > s.size:
		return fmt.Errorf("%w: %s has %d bytes, %d of them written by this process: another program wrote to it while it was open; it is left as it is",
			ErrSinkExcess, s.path, n, s.size)
	case n < s.size:
		return fmt.Errorf("%w: %s has %d bytes, %d were written to it by this process: another program cut it while it was open; it is left as it is",
			ErrSinkShort, s.path, n, s.size)
	}
	at, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s was moved away or removed while it was open", ErrSinkChanged, s.path)
	case err != nil:
		return err
	case !os.SameFile(at, fi):
		return fmt.Errorf("%w: %s was replaced by another file while it was open", ErrSinkChanged, s.path)
	}
	return nil
}

// ReadAt reads from the file at offset off.
func (s *FileSink) ReadAt(p []byte, off int64) (int, error) { return s.f.ReadAt(p, off) }

// Sync fsyncs the file.
func (s *FileSink) Sync() error { return s.f.Sync() }

// Size returns the file's length.
func (s *FileSink) Size() (int64, error) {
	fi, err := s.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Truncate cuts the file to size, fsyncs it, and moves the write position
// to the new end.
func (s *FileSink) Truncate(size int64) error {
	if err := s.f.Truncate(size); err != nil {
		return err
	}
	s.ahead.Reset(size) // truncating freed the reservation past size
	if _, err := s.f.Seek(size, io.SeekStart); err != nil {
		return err
	}
	s.size = size
	return s.f.Sync()
}

// Close gives back the space reserved past the end and closes the file,
// which releases its lock. A failure to give the space back only leaves it
// reserved (the bytes written are intact and synced), so it is not an
// error of Close.
func (s *FileSink) Close() error {
	_ = s.ahead.Release()
	return s.f.Close()
}
