// Package checksum is the CRC-32C (Castagnoli) that cdclog stores with every
// record it reads back, in the manner of etcd's WAL records: bbolt checks its
// meta pages but not its data pages, so without it a flipped bit on disk
// reads back as a different record.
//
// A record's checksum covers its key and then its value, so a value that
// turns up under another key (a damaged key, or an index that points at the
// wrong record) fails as surely as a damaged value. Sealed values, the
// framing of the records package recovery stores, are the 4-byte big-endian
// checksum followed by the payload.
package checksum

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Size is the size of a stored checksum.
const Size = 4

// table is the Castagnoli polynomial's: the standard library computes it
// with the CPU's CRC32 instructions (SSE 4.2 on amd64, CRC on arm64).
var table = crc32.MakeTable(crc32.Castagnoli)

// Of returns the checksum of key followed by value.
func Of(key, value []byte) uint32 {
	return crc32.Update(crc32.Update(0, table, key), table, value)
}

// Seal returns payload sealed under key: its checksum, then payload.
func Seal(key, payload []byte) []byte {
	v := make([]byte, Size, Size+len(payload))
	binary.BigEndian.PutUint32(v, Of(key, payload))
	return append(v, payload...)
}

// Unseal returns the payload of a value Seal made under key. It fails,
// saying why in words fit for an error message, when the value is too
// short or its checksum does not match.
func Unseal(key, value []byte) ([]byte, error) {
	if len(value) < Size {
		return nil, fmt.Errorf("%d bytes, shorter than its checksum", len(value))
	}
	if err := Verify(binary.BigEndian.Uint32(value), key, value[Size:]); err != nil {
		return nil, err
	}
	return value[Size:], nil
}

// Verify checks that stored is the checksum of key followed by value.
func Verify(stored uint32, key, value []byte) error {
	if got := Of(key, value); got != stored {
		return &MismatchError{Stored: stored, Computed: got}
	}
	return nil
}

// MismatchError is a checksum that does not match the record it was
// stored with.
type MismatchError struct {
	Stored, Computed uint32
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("checksum mismatch: stored %08x, computed %08x", e.Stored, e.Computed)
}
