package checksum

import (
	"bytes"
	"errors"
	"hash/crc32"
	"testing"
)

func TestOfIsCRC32COfKeyThenValue(t *testing.T) {
	key, value := []byte("state"), []byte("some value")
	want := crc32.Checksum(append(append([]byte(nil), key...), value...), crc32.MakeTable(crc32.Castagnoli))
	if got := Of(key, value); got != want {
		t.Fatalf("Of = %08x, want %08x", got, want)
	}
	// The check value of CRC-32C ("123456789"), as in RFC 3720.
	if got := Of(nil, []byte("123456789")); got != 0xe3069283 {
		t.Fatalf("CRC-32C check value %08x, want e3069283", got)
	}
}

func TestUnsealReturnsThePayloadAndRefusesEveryFlippedBit(t *testing.T) {
	key, payload := []byte{0, 0, 0, 0, 0, 0, 0, 7}, []byte("payload bytes")
	v := Seal(key, payload)
	if got, err := Unseal(key, v); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("Unseal = %q, %v", got, err)
	}
	for i := range len(v) * 8 {
		bad := bytes.Clone(v)
		bad[i/8] ^= 1 << (i % 8)
		var m *MismatchError
		if _, err := Unseal(key, bad); !errors.As(err, &m) {
			t.Fatalf("bit %d flipped: %v, want a mismatch", i, err)
		}
	}
	for i := range len(key) * 8 {
		other := bytes.Clone(key)
		other[i/8] ^= 1 << (i % 8)
		if _, err := Unseal(other, v); err == nil {
			t.Fatalf("the value read under a key with bit %d flipped", i)
		}
	}
	if _, err := Unseal(key, v[:3]); err == nil {
		t.Fatal("a 3-byte value unsealed")
	}
}
