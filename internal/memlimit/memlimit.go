// Package memlimit bounds the memory of a command that holds its state in
// memory by design (cdclog demangle): a size given on the command line,
// the machine's memory for the default, and a guard that says when the Go
// heap has passed the limit, so that the command stops with an error
// instead of growing until the machine swaps.
package memlimit

import (
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
)

// units maps a size suffix to its multiplier: K, M, G and T (and KiB,
// MiB, GiB, TiB) are powers of 1024, KB, MB, GB and TB powers of 1000.
var units = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseSize reads a size in bytes: a number, possibly with a fraction,
// and an optional unit (see units; case-insensitive, a space allowed
// before it), such as 512MiB, 4G, 1.5GiB or 1000000. "0" and "none" mean
// no limit and return 0.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "none") {
		return 0, nil
	}
	mult := 1.0
	for _, u := range units {
		if len(t) > len(u.suffix) && strings.EqualFold(t[len(t)-len(u.suffix):], u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || t == "" || strings.ContainsAny(t, "eExXpP_") {
		return 0, fmt.Errorf("%q is not a size (a number of bytes, or with a unit such as 512MiB or 4GiB)", s)
	}
	b := v * mult
	if b >= math.MaxUint64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return uint64(b), nil
}

// FormatSize renders n bytes in the largest IEC unit that keeps a
// number of at least 1: "512 MiB", "12.0 GiB".
func FormatSize(n uint64) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, unit := float64(n), ""
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f %s", v, unit)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// fallback is the default limit when the machine's memory is unknown.
const fallback = 4 << 30

// Default returns the default limit: half the machine's physical memory,
// or 4 GiB when it cannot be read.
func Default() uint64 {
	if t := physical(); t > 0 {
		return t / 2
	}
	return fallback
}

// Guard watches the Go heap against a limit. The zero Guard has no limit.
type Guard struct {
	max uint64
}

// Watch returns a guard for max bytes (0: none). It leaves the runtime
// alone: see SetSoftLimit.
func Watch(max uint64) *Guard { return &Guard{max: max} }

// SetSoftLimit makes max bytes (0: none) the Go runtime's soft memory
// limit, so that the collector works harder as the heap comes near it,
// before a guard for max sees the live heap itself pass it. (The limit is
// not the hard one a guard enforces: the runtime never fails an
// allocation for it.) It sets the limit of the whole process: a command
// calls it, a library does not.
func SetSoftLimit(max uint64) {
	if max > 0 && max < math.MaxInt64 {
		debug.SetMemoryLimit(int64(max))
	}
}

// Max returns the limit (0: none).
func (g *Guard) Max() uint64 { return g.max }

// Exceeded reports whether the heap the last collection found live has
// passed the limit, and that heap.
func (g *Guard) Exceeded() (live uint64, over bool) {
	if g == nil || g.max == 0 {
		return 0, false
	}
	live = LiveHeap()
	return live, live > g.max
}

// LiveHeap returns the heap the last collection found live (0 before the
// first collection, or where the runtime does not report it).
func LiveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
