package demangle

import "golang.org/x/sys/unix"

// hugePage is the size of a transparent huge page on the platforms Go
// runs Linux on in practice (x86-64, arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// adviseHuge advises the whole huge pages within the size bytes from p
// to be backed by transparent huge pages. It is a hint: an error (a
// kernel without them, a range not mapped that way) changes nothing the
// receiver does.
func adviseHuge(p, size uintptr) {
	beg := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + size) &^ (hugePage - 1)
	if end > beg {
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, beg, end-beg, unix.MADV_HUGEPAGE)
	}
}
