package kafka

import (
	"reflect"
	"testing"
)

func TestCursorRoundTripsAndRefusesDamage(t *testing.T) {
	c := Cursor{TopicID: [16]byte{1, 2, 3}, Partitions: map[int32]Position{0: {Offset: 0, Epoch: -1}, 3: {Offset: 1 << 40, Epoch: 7}, 100: {Offset: 5, Epoch: 0}}}
	b := c.Encode()
	got, err := DecodeCursor(b)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip: %+v, %v; want %+v", got, err, c)
	}
	for i := range b {
		if _, err := DecodeCursor(b[:i]); err == nil {
			t.Errorf("a cursor cut to %d bytes decoded", i)
		}
	}
	if _, err := DecodeCursor(append(b, 0)); err == nil {
		t.Error("a trailing byte decoded")
	}
}
