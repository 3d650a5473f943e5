package gctune

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/cdclog/cdclog/internal/memlimit"
)

// The collector's pace: GOGC 100, and no collection while the heap is below
// heapFloor.
const (
	gcPercent = 100
	heapFloor = 64 << 20
)

// Tune paces the garbage collector, once per process, unless GOGC is set.
//
// The hot paths' live heap is small and bounded: batches in flight, about
// 31 MB in ingest and 10 MB in demangle. With GOGC alone the heap goal
// starts at 4 MB and climbs over the first collections, so a run starts
// with a burst of collections, and a short ingest run peaked well below a
// long one (peak RSS 83 MB at 2M messages, 114 MB at 20M) although neither
// depends on what was seen. With the goal kept at heapFloor or more, the
// heap is about 64 MB from the start: ingest peaks at 86-88 and 94-96 MB on
// 2M and 20M messages, and demangle of 2M messages takes 145 ms instead of
// 157 (mean of 10; 20M: 1.27 s instead of 1.29-1.44 s) for 57 MB of memory
// instead of 36. Once the live heap is half the floor, GOGC alone rules: a
// large pending state gets twice its size, not more. A memory limit is not
// used, because when the pending state is large (live heap above the limit)
// it makes the collector run back to back.
func Tune() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(floorPercent(0)) // nothing has been collected yet
	armFloorHook()
}

// floorPercent returns the GOGC that puts the heap goal at heapFloor for a
// live heap of live bytes, or gcPercent if that is larger. The runtime
// counts a live heap of less than 4 MiB as 4 MiB (before the first
// collection, the goal is 4 MiB times GOGC/100).
func floorPercent(live uint64) int {
	live = max(live, 4<<20)
	if live >= heapFloor {
		return gcPercent
	}
	return max(gcPercent, int((heapFloor-live)*100/live))
}

// armFloorHook re-tunes GOGC after each collection until the floor no
// longer matters: a finalizer runs after the cycle that finds its object
// unreachable, and re-arms itself.
func armFloorHook() {
	runtime.SetFinalizer(new([16]byte), func(*[16]byte) {
		p := floorPercent(memlimit.LiveHeap())
		debug.SetGCPercent(p)
		if p > gcPercent {
			armFloorHook()
		}
	})
}
