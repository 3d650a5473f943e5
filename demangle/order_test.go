package demangle

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestCanonicalOrderIsTheOrderOfDataThenDiff: both ways of sorting a big
// time (through keys, and the updates themselves by the prefix in their
// line) give the order of sorting the updates by data bytes, then diff,
// whatever prefix the data share and however short they are.
func TestCanonicalOrderIsTheOrderOfDataThenDiff(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefix := rapid.SampledFrom([]string{"", `{"id":`, `"key-`, `{"a":{"b":[1,2,"`}).Draw(t, "prefix")
		n := rapid.IntRange(1, 300).Draw(t, "n")
		var a arena
		seen := map[string]bool{}
		var updates []heldUpdate
		for len(updates) < n {
			body := rapid.StringMatching(`[0-9a-c"]{0,12}`).Draw(t, "body")
			diff := rapid.SampledFrom([]int64{-2, -1, 1, 3}).Draw(t, "diff")
			key := fmt.Sprint(prefix+body, diff)
			if seen[key] {
				continue
			}
			seen[key] = true
			updates = append(updates, a.hold([]byte(prefix+body), diff, posAt(len(updates))))
		}
		want := slices.Clone(updates)
		slices.SortFunc(want, func(x, y heldUpdate) int { return compareHeld(&a, &x, &y) })
		sorts := map[string]func(*arena, []heldUpdate, int){"keys": sortThroughKeys, "prefix": sortByPrefix}
		how := rapid.SampledFrom([]string{"keys", "prefix"}).Draw(t, "how")
		sorts[how](&a, updates, commonPrefix(&a, updates))
		for k := range updates {
			got := updates[k]
			if !bytes.Equal(a.data(&got), a.data(&want[k])) || got.diff != want[k].diff {
				t.Fatalf("position %d: %s %+d, want %s %+d", k, a.data(&got), got.diff, a.data(&want[k]), want[k].diff)
			}
		}
	})
}
