package store

import (
	"encoding/binary"
	"fmt"
)

// CorruptError is a damaged record: where it is stored and what is wrong
// with it. Every reader of cdclog's records (packages wal and recovery)
// reports damage it finds as one, so that an operator learns which bucket
// and key to look at ('cdclog check' lists them all).
//
// It lives here, beside ErrCorrupt and the bucket names, because this is
// the package both wal and recovery build on: wal cannot import recovery,
// and recovery re-exports it as it re-exports this package's errors.
//
// It wraps ErrCorrupt, and Err when set (wal.ErrCorrupt for damage in the
// write-ahead log), so errors.Is(err, ErrCorrupt) holds for every one.
type CorruptError struct {
	// Bucket is the top-level bucket, such as "walseq" or "output".
	Bucket string
	// Key is the record's key; nil when the damage is not in one record
	// (a missing bucket). It is a copy, valid after the transaction that
	// read the record.
	Key []byte
	// Reason says what is wrong, such as "checksum mismatch: stored
	// 1c2d3e4f, computed 0a0b0c0d".
	Reason string
	// Err is a more specific sentinel the error wraps besides ErrCorrupt,
	// or nil.
	Err error
}

// Error reads "database is corrupt: bucket output, key 0000000000000401
// (1025): checksum mismatch: ...".
func (e *CorruptError) Error() string {
	if e.Key == nil {
		return fmt.Sprintf("%v: bucket %s: %s", ErrCorrupt, e.Bucket, e.Reason)
	}
	return fmt.Sprintf("%v: bucket %s, key %s: %s", ErrCorrupt, e.Bucket, FormatKey(e.Key), e.Reason)
}

// Unwrap returns ErrCorrupt and, when set, Err.
func (e *CorruptError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCorrupt, e.Err}
	}
	return []error{ErrCorrupt}
}

// FormatKey renders a key for people: printable ASCII as a quoted string
// ("state"), other keys in hex, followed by the numbers cdclog's binary
// keys hold: one 8-byte sequence number or time, or a 16-byte time and
// chunk sequence number (the write-ahead log's index).
func FormatKey(k []byte) string {
	printable := len(k) > 0
	for _, c := range k {
		if c < 0x20 || c > 0x7e {
			printable = false
			break
		}
	}
	switch {
	case printable:
		return fmt.Sprintf("%q", k)
	case len(k) == 8:
		return fmt.Sprintf("%x (%d)", k, binary.BigEndian.Uint64(k))
	case len(k) == 16:
		return fmt.Sprintf("%x (%d, %d)", k, binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]))
	}
	return fmt.Sprintf("%x", k)
}
