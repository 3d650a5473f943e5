// Package slab keeps copies of small values in blocks that are only ever
// appended to: one allocation per block instead of one per value, and a
// copy handed out stays valid, unchanged, for as long as it is referenced.
package slab

// Keep appends a copy of xs to the block *s, first starting a new block of
// max(size, len(xs)) elements when *s has no room, and returns the copy,
// with its capacity cut to its length so that appending to it cannot
// overwrite the block.
func Keep[T any](s *[]T, xs []T, size int) []T {
	if cap(*s)-len(*s) < len(xs) {
		*s = make([]T, 0, max(size, len(xs)))
	}
	start := len(*s)
	*s = append(*s, xs...)
	return (*s)[start:len(*s):len(*s)]
}
