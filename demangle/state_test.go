package demangle

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestASmallTimeSortsIntoCanonicalOrder: the few updates of an ordinary
// time, sorted in place by insertion as their release starts, come out
// by data bytes, then diff, from any order they arrived in.
func TestASmallTimeSortsIntoCanonicalOrder(t *testing.T) {
	// In canonical order: data that are prefixes of others, a quote, and
	// the same data with other diffs (which a time never holds, but the
	// order has them too).
	canonical := []struct {
		data string
		diff int64
	}{{"", 1}, {`"`, -1}, {"a", -2}, {"a", 3}, {"aa", 1}, {"ab", -1}, {"b", 1}, {"ba", 2}, {"c", -1}, {"c", 1}, {"cab", 1}, {"d", 5}}
	rng := rand.New(rand.NewPCG(3, 3))
	for round := range 2000 {
		n := 2 + round%(smallSort-1)
		var a arena
		ts := &timeState{}
		for _, k := range rng.Perm(len(canonical))[:n] {
			ts.updates = append(ts.updates, a.hold([]byte(canonical[k].data), canonical[k].diff, posAt(k)))
		}
		ts.sortForRelease(&a)
		for i := 1; i < n; i++ {
			x, y := &ts.updates[i-1], &ts.updates[i]
			if c := bytes.Compare(a.data(x), a.data(y)); c > 0 || c == 0 && x.diff >= y.diff {
				t.Fatalf("round %d: %q %+d sorted before %q %+d", round, a.data(x), x.diff, a.data(y), y.diff)
			}
		}
	}
}
