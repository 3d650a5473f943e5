//go:build linux

package prealloc

import (
	"os"
	"syscall"
)

const keepSize = 0x01 // FALLOC_FL_KEEP_SIZE

// New returns an Ahead for f, which must stay open while it is used.
func New(f *os.File) *Ahead { return &Ahead{f: f} }

// Ensure reserves space up to at least end + step/2, a step at a time,
// where the step is as long as the file (from MinStep to Step). It is
// best effort: a file system that cannot reserve turns it off, and
// nothing else changes.
func (a *Ahead) Ensure(end int64) {
	n := step(end)
	if a == nil || a.off || end+n/2 <= a.reserved {
		return
	}
	from := max(a.reserved, end)
	if err := syscall.Fallocate(int(a.f.Fd()), keepSize, from, n); err != nil {
		a.off = true
		return
	}
	a.reserved = from + n
}

// Release gives back the space reserved past the file's end, by cutting
// the file to its own length (which frees blocks past the end: punching a
// hole there does nothing on ext4).
func (a *Ahead) Release() error {
	if a == nil || a.off || a.reserved == 0 {
		return nil
	}
	fi, err := a.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() >= a.reserved {
		a.reserved = 0
		return nil
	}
	a.reserved = 0
	return a.f.Truncate(fi.Size())
}

// Reserved reports whether space is reserved past the end of the file.
func (a *Ahead) Reserved() bool { return a != nil && !a.off && a.reserved > 0 }

// Stat returns the file's information.
func (a *Ahead) Stat() (os.FileInfo, error) { return a.f.Stat() }

// Reset forgets the reservation, after the file was cut to size (which
// frees what was reserved past it).
func (a *Ahead) Reset(size int64) {
	if a != nil {
		a.reserved = size
	}
}
