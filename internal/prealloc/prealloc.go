// Package prealloc reserves disk space ahead of the end of a file that is
// appended to and fsynced often.
//
// On Linux filesystems with delayed allocation (ext4, xfs), each fsync of a
// file that grew allocates the new blocks and journals the change: on the
// development machine, 800 appends of 1 MiB each fsynced took 1.2 to 2.2 s
// of system time, and 0.17 s when the space was reserved beforehand with
// fallocate(FALLOC_FL_KEEP_SIZE). The reservation does not change the
// file's size or contents: reading past the end still stops at the end,
// and reserved blocks inside the file read as zeros, as holes do.
package prealloc

import "os"

// Step is the most reserved at a time; MinStep the least. In between,
// a reservation is as long as the file: a small file reserves little (a
// 4-message database reserved 64 MiB for as long as it was open), and a
// file of 64 MiB or more reserves in steps of 64 MiB, as it always did.
const (
	Step    = 64 << 20
	MinStep = 1 << 20
)

// step returns how much to reserve past end.
func step(end int64) int64 { return min(max(end, MinStep), Step) }

// Ahead keeps space reserved past a growing file's end. The zero value
// reserves nothing; use New.
type Ahead struct {
	f        *os.File
	reserved int64 // the reservation ends here
	off      bool  // the file system does not support it, or fd is not set
}
