//go:build linux

package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// ReleaseMapped drops the database file's pages from this process's page
// tables (madvise MADV_DONTNEED on bbolt's read-only shared mapping). The
// pages stay in the kernel's page cache and are mapped again, from there,
// when bbolt next reads them; what changes is that they stop counting in
// the process's resident set, which otherwise grows with every page bbolt
// has ever touched: with the file, not with what is pending.
//
// Call it only from inside a transaction, so that the mapping cannot
// move while this runs: bbolt remaps the file only in a write transaction
// (inside one, call it before the transaction writes), and waits for every
// read transaction to end before it does. A read transaction that walks
// much of the file (the WAL's index, for its statistics) calls it as it
// goes, to keep what it has read from piling up.
func (db *DB) ReleaseMapped() error {
	start := db.Info().Data
	if start == 0 {
		return nil
	}
	end, err := mappingEnd(start)
	if err != nil {
		return fmt.Errorf("release mapped pages: %w", err)
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_DONTNEED); errno != 0 {
		return fmt.Errorf("release mapped pages: madvise: %w", errno)
	}
	return nil
}

// mappingEnd returns the end of the shared mapping that starts at start,
// read from /proc/self/maps: bbolt does not say how long its mapping is,
// and advising past its end could discard memory that is not the file's.
func mappingEnd(start uintptr) (uintptr, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 7f12a0000000-7f12e0000000 r--s 00000000 fd:01 1234 /path
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 2 {
			continue
		}
		lo, hi, ok := bytes.Cut(fields[0], []byte("-"))
		if !ok {
			continue
		}
		s, err1 := strconv.ParseUint(string(lo), 16, 64)
		e, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || uintptr(s) != start {
			continue
		}
		if perms := fields[1]; len(perms) < 4 || perms[3] != 's' || perms[1] == 'w' {
			return 0, fmt.Errorf("mapping at %#x is %s, not a read-only shared mapping", start, perms)
		}
		return uintptr(e), nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no mapping at %#x", start)
}
