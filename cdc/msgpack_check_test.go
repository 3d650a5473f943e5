package cdc

import (
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// TestCheckMsgpackBoundsRefusesCountsTheBytesCannotHold: a value the library
// encodes passes whole; a container claiming more elements than there are
// bytes left (what made msgpack.Unmarshal allocate 48 GB for an 18-byte
// receiver snapshot, found by FuzzRestore), a cut value and a bad type
// byte do not.
func TestCheckMsgpackBoundsRefusesCountsTheBytesCannotHold(t *testing.T) {
	good, err := msgpack.Marshal(map[string]any{"a": []any{1, "x", 2.5, nil, true, []byte{1, 2}}, "b": map[string]int{"c": 3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		b          []byte
	}{
		{"a whole value", "", good},
		{"trailing bytes are the caller's", "", append(append([]byte{}, good...), 0xc1)},
		{"empty array", "", []byte{0x90}},
		{"array32 of a million in 5 bytes", "container of 1000000 values with 0 bytes left", []byte{0xdd, 0x00, 0x0f, 0x42, 0x40}},
		{"array32 of 2^32-1", "container of 4294967295 values with 0 bytes left", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}},
		{"map16 of 3 pairs with 4 bytes", "container of 6 values", []byte{0xde, 0x00, 0x03, 1, 2, 3, 4}},
		{"nested counts add up", "container of 2 values", []byte{0x92, 0x92, 1, 2}},
		{"cut string", "end inside the value at byte 0", []byte{0xa5, 'a', 'b'}},
		{"nothing", "end inside the value at byte 0", nil},
		{"never-used type byte", "invalid type byte 0xc1", []byte{0xc1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckMsgpackBounds(tc.b)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// FuzzCheckMsgpackBounds: whatever CheckMsgpackBounds accepts, the library
// decodes
// without allocating more than a small multiple of its size, and it never
// panics.
func FuzzCheckMsgpackBounds(f *testing.F) {
	f.Add([]byte{0x92, 0x01, 0xa1, 'x'})
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckMsgpackBounds(b) != nil {
			return
		}
		var v any
		_ = msgpack.Unmarshal(b, &v)
	})
}
