package demangle

import (
	"slices"
	"unsafe"
)

// hugeMin is the size from which a table the receiver allocates asks for
// transparent huge pages (see makeHuge).
const hugeMin = 4 << 20

// hugePage is the size of a transparent huge page on the platforms Go
// runs Linux on in practice (x86-64, arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// makeHuge returns make([]T, n, c), the memory of a large one advised to
// be backed by transparent huge pages where the system gives them on
// request only (Linux's "madvise" mode, common by default; Go's heap asks
// for none). A big time's updates and its index are hundreds of
// megabytes read at random, one message at a time: on 4 KiB pages every
// access misses the TLB and every page first touched faults.
func makeHuge[T any](n, c int) []T {
	s := make([]T, n, c)
	var zero T
	if size := uintptr(c) * unsafe.Sizeof(zero); size >= hugeMin {
		adviseHuge(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size))
	}
	return s
}

// growHuge returns s with room for need more elements: as slices.Grow
// grows it, and through makeHuge once the new table reaches hugeMin
// bytes, so that a small time's updates cost no more than before.
func growHuge[T any](s []T, need int) []T {
	if cap(s)-len(s) >= need {
		return s
	}
	var zero T
	c := max(len(s)+need, cap(s)+cap(s)/4)
	if uintptr(c)*unsafe.Sizeof(zero) < hugeMin {
		return slices.Grow(s, need)
	}
	t := makeHuge[T](len(s), c)
	copy(t, s)
	return t
}
