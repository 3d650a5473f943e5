//go:build !unix

package recovery

import (
	"io/fs"
	"os"
	"time"
)

// lockFile does nothing where flock does not exist.
func lockFile(*os.File, time.Duration) error { return nil }

// inode returns 0: unknown.
func inode(fs.FileInfo) uint64 { return 0 }
