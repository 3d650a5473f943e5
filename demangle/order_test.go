package demangle

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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

// TestRadixSortEdgesGiveTheOrderOfDataThenDiff: the radix sort of a big
// time gives the order of a plain sort by data bytes, then diff, where its
// buckets run out of bytes or updates: all sort prefixes equal, prefixes
// that differ only in their last byte, data shorter than the prefix (or
// empty), equal data with different diffs, and sizes around radixMin and
// keySortMax.
func TestRadixSortEdgesGiveTheOrderOfDataThenDiff(t *testing.T) {
	cases := []struct {
		name string
		n    int
		// update returns the i-th update's data and diff.
		update func(i int) (string, int64)
		// lcp, when not -1, is passed to sortByPrefix instead of the
		// common prefix (any shorter prefix the data share is valid);
		// -2 sorts through sortCanonical, as a release does.
		lcp int
	}{
		{"all prefixes equal", 1000, func(i int) (string, int64) { return fmt.Sprintf(`{"id":"AAAAAAAAAA%d"}`, i), 1 }, 0},
		{"all prefixes equal, shared tails", 1000, func(i int) (string, int64) { return fmt.Sprintf(`{"k":"%08d%d"}`, 0, i%10), int64(i/10 - 50) }, 2},
		{"prefixes differ in the last byte", 700, func(i int) (string, int64) { return fmt.Sprintf(`{"id":1234567%c,"x":%d}`, 'a'+i%26, i), -1 }, -1},
		{"prefixes differ in the last byte only", 300, func(i int) (string, int64) { return fmt.Sprintf("abcdefg%c", 32+i%95), int64(i / 95) }, 0},
		{"data shorter than the prefix", 400, func(i int) (string, int64) { return fmt.Sprintf("%03x", i)[:1+i%3], int64(i) }, -1},
		{"data shorter than the prefix, and empty", 200, func(i int) (string, int64) { return "abc"[:i%4], int64(i/4 - 25) }, -1},
		{"equal data, different diffs", 500, func(i int) (string, int64) { return fmt.Sprintf(`{"id":%d}`, i%5), int64(i/5 - 50) }, -1},
		{"radixMin updates", radixMin, func(i int) (string, int64) { return fmt.Sprintf(`{"id":%d}`, i*7919%1000), 1 }, -1},
		{"radixMin+1 updates", radixMin + 1, func(i int) (string, int64) { return fmt.Sprintf(`{"id":%d}`, i*7919%1000), 1 }, -1},
		{"keySortMax updates", keySortMax, func(i int) (string, int64) { return fmt.Sprintf(`{"id":%d}`, i), int64(i%3 - 1) }, -2},
		{"keySortMax+1 updates", keySortMax + 1, func(i int) (string, int64) { return fmt.Sprintf(`{"id":%d}`, i), int64(i%3 - 1) }, -2},
		{"keySortMax+1 updates, few prefixes", keySortMax + 1, func(i int) (string, int64) { return fmt.Sprintf(`{"id":%d,"n":%d}`, i%40, i), 1 }, -2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.n), 3))
			var a arena
			var updates []heldUpdate
			for _, i := range rng.Perm(c.n) {
				data, diff := c.update(i)
				updates = append(updates, a.hold([]byte(data), diff, posAt(i)))
			}
			want := slices.Clone(updates)
			slices.SortFunc(want, func(x, y heldUpdate) int { return compareHeld(&a, &x, &y) })
			switch c.lcp {
			case -2:
				sortCanonical(&a, updates)
			case -1:
				sortByPrefix(&a, updates, commonPrefix(&a, updates))
			default:
				sortByPrefix(&a, updates, c.lcp)
			}
			for k := range updates {
				if got := updates[k]; !bytes.Equal(a.data(&got), a.data(&want[k])) || got.diff != want[k].diff {
					t.Fatalf("position %d: %q %+d, want %q %+d", k, a.data(&got), got.diff, a.data(&want[k]), want[k].diff)
				}
			}
		})
	}
}
