//go:build !linux

package store

// ReleaseMapped does nothing on this system; see the Linux version.
func (db *DB) ReleaseMapped() error { return nil }
