package gctune

import "testing"

func TestFloorPercentKeepsTheHeapGoalAtTheFloorUntilGOGCExceedsIt(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 1500},             // no heap yet: as for 4 MiB
		{4 << 20, 1500},       // goal 4 + 60 = 64 MiB
		{16 << 20, 300},       // goal 16 + 48 = 64 MiB
		{32 << 20, gcPercent}, // 32 + 32: the floor and GOGC agree
		{40 << 20, gcPercent}, // above: GOGC alone
		{heapFloor * 4, gcPercent},
	} {
		if got := floorPercent(tc.live); got != tc.want {
			t.Errorf("floorPercent(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
		if goal := max(tc.live, 4<<20) * uint64(100+floorPercent(tc.live)) / 100; goal < heapFloor {
			t.Errorf("live %d MiB: heap goal %d MiB is below the floor", tc.live>>20, goal>>20)
		}
	}
}
