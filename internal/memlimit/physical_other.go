//go:build !linux

package memlimit

// physical returns 0: the machine's memory is read on Linux only.
func physical() uint64 { return 0 }
