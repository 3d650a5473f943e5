package demangle

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestGrowHugeKeepsWhatItHoldsAndMakesRoom: growing through makeHuge
// keeps the elements in order, makes room for at least what was asked,
// and gives zeroed room.
func TestGrowHugeKeepsWhatItHoldsAndMakesRoom(t *testing.T) {
	var s []uint64
	for i := range 3 << 20 { // past hugeMin, several times
		s = growHuge(s, 1)
		if cap(s) <= len(s) {
			t.Fatalf("no room at %d: cap %d", i, cap(s))
		}
		if z := s[:cap(s)][len(s)]; z != 0 {
			t.Fatalf("room at %d holds %d", i, z)
		}
		s = append(s, uint64(i))
	}
	for i, v := range s {
		if v != uint64(i) {
			t.Fatalf("element %d is %d", i, v)
		}
	}
	if g := growHuge(s, 10<<20); cap(g)-len(g) < 10<<20 || len(g) != len(s) {
		t.Fatalf("grown for 10Mi: len %d cap %d", len(g), cap(g))
	}
}

// TestALargeTableIsAdvisedHugePages: on Linux with transparent huge pages,
// the memory of a table from hugeMin up lies in a mapping the kernel
// flags for huge pages (VmFlags "hg" in /proc/self/smaps).
func TestALargeTableIsAdvisedHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("huge pages are advised on Linux only")
	}
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages here")
	}
	s := makeHuge[byte](0, 3*hugePage)
	addr := (uintptr(unsafe.Pointer(unsafe.SliceData(s))) + hugePage - 1) &^ (hugePage - 1)
	flags, err := vmFlags(addr)
	if err != nil {
		t.Skip(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("mapping at %#x has VmFlags %q, no hg", addr, flags)
	}
	runtime.KeepAlive(s)
}

// vmFlags returns the VmFlags of the mapping that holds addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping holds %#x", addr)
}
