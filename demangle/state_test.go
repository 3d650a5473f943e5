package demangle

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestASmallTimeSortsIntoCanonicalOrder: the few updates of an ordinary
// time, sorted in place by insertion as their release starts, come out
// in the order of sorting them by data bytes, then diff.
func TestASmallTimeSortsIntoCanonicalOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, smallSort).Draw(t, "n")
		var a arena
		seen := map[string]bool{}
		ts := &timeState{}
		for len(ts.updates) < n {
			data := rapid.StringMatching(`[ab"]{0,4}`).Draw(t, "data")
			diff := rapid.SampledFrom([]int64{-2, -1, 1, 3}).Draw(t, "diff")
			if key := fmt.Sprint(data, diff); !seen[key] {
				seen[key] = true
				ts.updates = append(ts.updates, a.hold([]byte(data), diff, posAt(len(ts.updates))))
			}
		}
		want := slices.Clone(ts.updates)
		slices.SortFunc(want, func(x, y heldUpdate) int { return compareHeld(&a, &x, &y) })
		ts.sortForRelease(&a)
		for k := range want {
			got := &ts.updates[k]
			if !bytes.Equal(a.data(got), a.data(&want[k])) || got.diff != want[k].diff {
				t.Fatalf("position %d: %q %+d, want %q %+d", k, a.data(got), got.diff, a.data(&want[k]), want[k].diff)
			}
		}
	})
}
