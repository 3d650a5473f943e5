package demangle

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge advises the whole huge pages within b to be backed by
// transparent huge pages. It is a hint: an error (a kernel without them,
// a range not mapped that way) changes nothing the receiver does.
func adviseHuge(b []byte) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := int((hugePage - p%hugePage) % hugePage)
	end := len(b) - int((p+uintptr(len(b)))%hugePage)
	if end > beg {
		_ = unix.Madvise(b[beg:end], unix.MADV_HUGEPAGE)
	}
}
