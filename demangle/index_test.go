package demangle

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestTheIndexFindsWhatItHoldsAndStaysAtMostThreeQuartersFull: whatever
// the number of updates, and whether a count reserved room first, find
// returns each held update's position and -1 for data not held, and the
// table never holds more than three quarters of its slots (so a probe
// always ends at an empty one).
func TestTheIndexFindsWhatItHoldsAndStaysAtMostThreeQuartersFull(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 3000).Draw(t, "n")
		var a arena
		var x updateIndex
		if rapid.Bool().Draw(t, "reserve") {
			x.reserve(rapid.IntRange(1, n).Draw(t, "count"))
		}
		var updates []heldUpdate
		for i := range n {
			updates = append(updates, a.hold([]byte(fmt.Sprintf(`{"id":%d}`, i)), 1, posAt(i)))
			x.add(&a, updates, i)
			if 4*x.n > 3*len(x.slots) {
				t.Fatalf("%d slots used of %d", x.n, len(x.slots))
			}
		}
		for i := range updates {
			if p, _ := x.find(&a, updates, a.data(&updates[i])); p != i {
				t.Fatalf("update %d found at %d", i, p)
			}
		}
		if p, _ := x.find(&a, updates, []byte(`{"id":-1}`)); p != -1 {
			t.Fatalf("data not held found at %d", p)
		}
	})
}
