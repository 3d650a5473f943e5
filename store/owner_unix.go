//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives the file at name fi's owner and group. Changing the
// owner needs privileges (root has them): without them the owner and
// group are kept only where this process may set them (its own user, a
// group it is in), and otherwise are the process's.
func keepOwner(name string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if err := os.Chown(name, int(st.Uid), int(st.Gid)); err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	// Not allowed to give the user: perhaps the group.
	if err := os.Chown(name, -1, int(st.Gid)); err != nil && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return nil
}
