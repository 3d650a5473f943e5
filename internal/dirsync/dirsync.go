// Package dirsync makes a directory's entries durable, for the packages
// that create files whose existence a run reports (store's database and
// output files, cdc's quarantine files).
package dirsync

import (
	"fmt"
	"os"
)

// Sync makes the directory's entries durable: a created or renamed file
// is not on disk until its directory is.
func Sync(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
