//go:build !unix

package store

import "os"

// unlock does nothing here: closing f is all openBolt can do.
func unlock(*os.File) {}
