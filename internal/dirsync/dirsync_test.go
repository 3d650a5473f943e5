package dirsync

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

func TestSyncSucceedsOnADirectoryAndFailsOnAMissingOne(t *testing.T) {
	dir := t.TempDir()
	if err := Sync(dir); err != nil {
		t.Fatalf("Sync(%s) = %v", dir, err)
	}
	if err := Sync(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Sync of a missing directory = %v, want fs.ErrNotExist", err)
	}
}
