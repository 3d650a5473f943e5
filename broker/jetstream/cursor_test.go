package jetstream

import "testing"

func TestCursorRoundTripsAndRefusesDamage(t *testing.T) {
	c := Cursor{Created: 1764500000123456789, Next: 42}
	b := c.Encode()
	if got, err := DecodeCursor(b); err != nil || got != c {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for i := range b {
		if _, err := DecodeCursor(b[:i]); err == nil {
			t.Errorf("a cursor cut to %d bytes decoded", i)
		}
	}
	if _, err := DecodeCursor(append(b, 0)); err == nil {
		t.Error("a trailing byte decoded")
	}
	if _, err := DecodeCursor(Cursor{Created: 1, Next: 0}.Encode()); err == nil {
		t.Error("sequence 0 decoded")
	}
}
