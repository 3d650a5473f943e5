//go:build unix

package store

import (
	"os"
	"syscall"
)

// unlock releases bbolt's lock on f.
func unlock(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
