package main

import (
	"os"
	"runtime/debug"
)

// tuneGC trades a little memory for much less garbage-collection work: the
// hot paths allocate in blocks that die young, and at Go's default the
// collector would run every few megabytes. A memory limit keeps the
// resident set bounded all the same. GOGC and GOMEMLIMIT, when set, win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(128 << 20)
	}
}
