package cliargs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes ParseSize takes, longest first: IEC units
// (powers of 1024), SI units (powers of 1000) and bytes.
var sizeUnits = []struct {
	suffix string
	factor uint64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize reads a size in bytes: a whole number with an optional unit,
// "64MiB", "64M" (both 64×2^20), "64MB" (64×10^6), "512", "512B". Units
// are case-sensitive but for a lower-case k, m, g, t meaning the IEC
// unit.
func ParseSize(s string) (int64, error) {
	num, factor := s, uint64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) || len(u.suffix) == 1 && u.suffix != "B" && strings.HasSuffix(s, strings.ToLower(u.suffix)) {
			num, factor = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.factor
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: want a whole number of bytes, with an optional unit (KiB, MiB, GiB; KB, MB, GB)", s)
	}
	if n > math.MaxInt64/factor {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n * factor), nil
}
