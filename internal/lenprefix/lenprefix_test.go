package lenprefix

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestAppendWritesTheLengthThenTheValue(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 16383, 16384, 70000} {
		value := bytes.Repeat([]byte{'v'}, n)
		got := Append([]byte("prefix"), func(b []byte) []byte { return append(b, value...) })
		want := append(binary.AppendUvarint([]byte("prefix"), uint64(n)), value...)
		if !bytes.Equal(got, want) {
			t.Fatalf("value of %d bytes: %d bytes appended, want %d", n, len(got)-6, len(want)-6)
		}
	}
}

func TestWidenMatchesAppend(t *testing.T) {
	for _, n := range []int{128, 300, 16383, 16384, 70000} {
		value := bytes.Repeat([]byte{'v'}, n)
		want := Append([]byte("prefix"), func(b []byte) []byte { return append(b, value...) })
		got := Widen(append(append([]byte("prefix"), 0), value...), len("prefix"))
		if !bytes.Equal(got, want) {
			t.Fatalf("value of %d bytes: %d bytes, want %d", n, len(got), len(want))
		}
	}
}
