//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an advisory lock on f without waiting: exclusive for a
// writer, shared for a reader, as bbolt takes it (flock(2), so that
// bbolt's own flock on the same file description succeeds at once). It
// reports false when another process holds a conflicting lock.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, &os.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
}

// unlock releases the lock tryLock took.
func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
