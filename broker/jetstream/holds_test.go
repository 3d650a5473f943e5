package jetstream

import "testing"

func TestHoldsMatchesStreamSubjectsWithWildcards(t *testing.T) {
	for _, c := range []struct {
		subjects []string
		subject  string
		want     bool
	}{
		{[]string{"a.b"}, "a.b", true},
		{[]string{"a.b"}, "a.c", false},
		{[]string{"a.b"}, "a", false},
		{[]string{"a.b"}, "a.b.c", false},
		{[]string{"a.*"}, "a.x", true},
		{[]string{"a.*"}, "a.x.y", false},
		{[]string{"a.*"}, "a", false},
		{[]string{"a.>"}, "a.x.y", true},
		{[]string{"a.>"}, "a", false},
		{[]string{">"}, "anything.at.all", true},
		{[]string{"*.b.>"}, "x.b.c", true},
		{[]string{"*.b.>"}, "x.c.c", false},
		{[]string{"x.y", "a.*"}, "a.q", true},
		{nil, "a", false},
	} {
		if got := holds(c.subjects, c.subject); got != c.want {
			t.Errorf("holds(%q, %q) = %v, want %v", c.subjects, c.subject, got, c.want)
		}
	}
}
