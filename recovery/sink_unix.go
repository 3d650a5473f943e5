//go:build unix

package recovery

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on f, retrying until timeout; then it
// fails with ErrSinkLocked.
func lockFile(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return err
		case time.Now().After(deadline):
			return ErrSinkLocked
		}
		time.Sleep(min(50*time.Millisecond, time.Until(deadline)+time.Millisecond))
	}
}

// inode returns the file's inode number.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
