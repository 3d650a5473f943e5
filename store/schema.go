package store

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Schema versions.
//
//	1  the first layout: records without checksums
//	2  every record read back carries a CRC-32C (see the package
//	   documentation); a database of version 1 is upgraded to 2 in place
//	   by the first process that opens it for writing (package recovery)
//	3  the pending state is on disk (package recovery: "The pending state
//	   on disk"): a WAL chunk's index record starts at the earliest time
//	   its entries speak about, a progress statement's lower bound
//	   included, from the chunk named in meta "spans_from" on; the
//	   checkpoint may hold a memory horizon, and the WAL entries beyond
//	   it, not judged yet, may repeat or contradict one another. An older
//	   database is upgraded to 3 the same way.
const (
	OldestSchema = 1
	// ChecksumSchema is the first version whose records carry checksums.
	ChecksumSchema = 2
	// PendingSchema is the first version that keeps the pending state
	// on disk.
	PendingSchema = 3
)

// SetSchema records schema version v in meta. It is for the upgrade of an
// older database, in the transaction that converts it.
func SetSchema(tx *bolt.Tx, v uint64) error {
	meta := tx.Bucket(BucketMeta)
	if meta == nil {
		return &CorruptError{Bucket: string(BucketMeta), Reason: "bucket missing"}
	}
	if err := meta.Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, v)); err != nil {
		return fmt.Errorf("write schema version: %w", err)
	}
	return nil
}
