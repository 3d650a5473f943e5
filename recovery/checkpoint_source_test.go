package recovery

import "testing"

// TestSourceIndexesAreStableAcrossClonesAndAppends: source returns the
// index a linear scan of Sources would, also for names loaded with the
// checkpoint and for a repeated name, and a clone's appends never show in
// the original nor the original's in the clone.
func TestSourceIndexesAreStableAcrossClonesAndAppends(t *testing.T) {
	cp := checkpoint{Sources: []string{"a", "b", "a"}}
	tests := []struct {
		name string
		want uint64
	}{
		{"a", 0}, {"b", 1}, {"c", 3}, {"c", 3}, {"d", 4}, {"b", 1},
	}
	for _, tc := range tests {
		if got := cp.source(tc.name); got != tc.want {
			t.Fatalf("source(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
	c := cp.clone()
	if got := c.source("e"); got != 5 {
		t.Fatalf("clone: source(e) = %d, want 5", got)
	}
	if got := cp.source("f"); got != 5 {
		t.Fatalf("original: source(f) = %d, want 5", got)
	}
	if c.sourceName(5) != "e" || cp.sourceName(5) != "f" || c.sourceName(3) != "c" {
		t.Fatalf("clone %v, original %v", c.Sources, cp.Sources)
	}
}
