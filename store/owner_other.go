//go:build !unix

package store

import "os"

// keepOwner does nothing on this system, which has no Unix owners.
func keepOwner(string, os.FileInfo) error { return nil }
