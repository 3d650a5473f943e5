package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
)

// tuneGC paces the garbage collector for the command line args (without
// the program name), once per process: ingest's way when args name the
// ingest command (tuneIngestGC; a file named "ingest" given to another
// command only changes its pacing), else GOGC 150. The hot paths' live heap
// is small and bounded (batches in flight), so a collector running at every
// doubling of it costs CPU for nothing. A memory limit is not used, because
// when the pending state is large (live heap above the limit) it makes the
// collector run back to back. GOGC, when set, wins.
func tuneGC(args []string) {
	switch {
	case os.Getenv("GOGC") != "":
	case slices.Contains(args, "ingest"):
		tuneIngestGC()
	default:
		debug.SetGCPercent(150)
	}
}

// Ingest's collector: GOGC 100, and no collection while the heap is below
// ingestHeapFloor.
const (
	ingestGCPercent = 100
	ingestHeapFloor = 64 << 20
)

// tuneIngestGC paces the collector for ingest, whose live heap settles
// near 31 MB (the batches in the pipeline) within its first tenth of a
// second. With GOGC alone the heap goal climbs there from 4 MB over the
// first collections, so a short run peaked well below a long one (peak RSS
// 83 MB at 2M messages, 114 MB at 20M) although neither depends on what
// was seen; with the floor the goal is about 64 MB from the start, and the
// peaks are 86-88 and 94-96 MB, at the same speed. Once the live heap is half the floor, GOGC alone rules
// (a large pending state gets twice its size, not more).
func tuneIngestGC() {
	debug.SetGCPercent(floorPercent(liveHeap()))
	armFloorHook()
}

// floorPercent returns the GOGC that puts the heap goal at ingestHeapFloor
// for a live heap of live bytes, or ingestGCPercent if that is larger. The
// runtime counts a live heap of less than 4 MiB as 4 MiB (before the first
// collection, the goal is 4 MiB times GOGC/100).
func floorPercent(live uint64) int {
	live = max(live, 4<<20)
	if live >= ingestHeapFloor {
		return ingestGCPercent
	}
	return max(ingestGCPercent, int((ingestHeapFloor-live)*100/live))
}

// armFloorHook re-tunes GOGC after each collection until the floor no
// longer matters: a finalizer runs after the cycle that finds its object
// unreachable, and re-arms itself.
func armFloorHook() {
	runtime.SetFinalizer(new([16]byte), func(*[16]byte) {
		p := floorPercent(liveHeap())
		debug.SetGCPercent(p)
		if p > ingestGCPercent {
			armFloorHook()
		}
	})
}

// liveHeap returns the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
