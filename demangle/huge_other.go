//go:build !linux

package demangle

// adviseHuge does nothing where huge pages are not asked for by madvise.
func adviseHuge(b []byte) {}
