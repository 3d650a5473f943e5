//go:build linux

package input

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// watcher wakes a followed file's wait as soon as the file is written, or
// a file appears at its path: an inotify instance watching the open file
// (through /proc/self/fd, so the very file that is open, whatever is at
// the path now) and its directory (for a file created or moved to the
// path). Its descriptor is non-blocking and in the runtime's poller, so a
// wait is a read with a deadline. The poll stays the fallback: a wait
// never lasts longer than one, whatever inotify reports.
type watcher struct {
	f      *os.File // the inotify instance
	fd     int
	base   string // the path's name in its directory
	dirWd  int32  // -1: the directory is not watched (it does not exist)
	dir    string
	fileWd int32 // -1: no file watched
	buf    [4096]byte
}

// Masks: a write, a truncation (which is one), an attribute change, the
// file moved or deleted; a file created at the path or moved there.
const (
	fileEvents = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE | syscall.IN_MOVE_SELF | syscall.IN_DELETE_SELF
	dirEvents  = syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_ONLYDIR
)

// newWatcher returns a watcher for the file at abs, an absolute path, or
// the error that leaves its wait to the poll alone.
func newWatcher(abs string) (*watcher, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	w := &watcher{f: os.NewFile(uintptr(fd), "inotify"), fd: fd, base: filepath.Base(abs), dir: filepath.Dir(abs), dirWd: -1, fileWd: -1}
	w.watchDir()
	return w, nil
}

// watchDir watches the path's directory, when it exists.
func (w *watcher) watchDir() {
	if w.dirWd >= 0 {
		return
	}
	if wd, err := syscall.InotifyAddWatch(w.fd, w.dir, dirEvents); err == nil {
		w.dirWd = int32(wd)
	}
}

// follow watches f, the file now open, instead of the one before. Call
// it before reading f: what is written after is then reported.
func (w *watcher) follow(f *os.File) {
	// Not f.Fd(), which would make f blocking for good.
	err := errors.New("no descriptor")
	var wd int
	if rc, cerr := f.SyscallConn(); cerr == nil {
		rc.Control(func(fd uintptr) {
			wd, err = syscall.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(int(fd)), fileEvents)
		})
	}
	if err != nil {
		// No /proc: watch by name, which may be another file already;
		// the poll notices what it misses.
		wd, err = syscall.InotifyAddWatch(w.fd, f.Name(), fileEvents)
	}
	old := w.fileWd
	w.fileWd = -1
	if err == nil {
		w.fileWd = int32(wd)
	}
	if old >= 0 && old != w.fileWd {
		syscall.InotifyRmWatch(w.fd, uint32(old)) // already gone with its file: no matter
	}
}

// wait returns when the file is written or a file appears at the path,
// after d at the latest, or when ctx ends (with its error). Any other
// error means the watcher no longer works: the caller polls instead.
func (w *watcher) wait(ctx context.Context, d time.Duration) error {
	w.watchDir() // made since the last wait, maybe
	if err := w.f.SetReadDeadline(time.Now().Add(d)); err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	// A late call (ctx ended as this wait returned) only makes the next
	// wait end early: a spurious wake-up, which is harmless.
	stop := context.AfterFunc(ctx, func() { w.f.SetReadDeadline(time.Now()) })
	defer stop()
	for {
		n, err := w.f.Read(w.buf[:])
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return ctx.Err()
		case err != nil:
			return fmt.Errorf("inotify: %w", err)
		}
		if w.relevant(w.buf[:n]) {
			return ctx.Err()
		}
	}
}

// relevant reports whether the events in b concern the file followed:
// its own, or its directory's about its name; an overflowed queue may
// have lost one.
func (w *watcher) relevant(b []byte) bool {
	for len(b) >= syscall.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		size := syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:]))
		if size > len(b) {
			return true // cannot happen: the kernel gives whole events
		}
		name := b[syscall.SizeofInotifyEvent:size]
		b = b[size:]
		switch {
		case mask&syscall.IN_Q_OVERFLOW != 0, wd == w.fileWd && wd >= 0:
			return true
		case wd == w.dirWd && wd >= 0 && string(trimNUL(name)) == w.base:
			return true
		}
	}
	return false
}

// trimNUL drops the NUL padding of an inotify event's name.
func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// close releases the inotify instance.
func (w *watcher) close() error { return w.f.Close() }
