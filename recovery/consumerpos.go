package recovery

import (
	"encoding/binary"

	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// A consumer's position is stored in the consumers bucket under its name:
// the sequence number of the next record it will read (8 bytes BE),
// sealed with a CRC-32C of the name and those 8 bytes (a schema 1
// database stored the 8 bytes alone).

// consumerValue encodes a consumer's position.
func consumerValue(name string, next uint64) []byte {
	return checksum.Seal([]byte(name), binary.BigEndian.AppendUint64(nil, next))
}

// putConsumer stores the named consumer's position.
func putConsumer(tx *bolt.Tx, name string, next uint64) error {
	b := tx.Bucket(store.BucketConsumers)
	if b == nil {
		return corruptRecord(store.BucketConsumers, nil, "bucket missing")
	}
	return b.Put([]byte(name), consumerValue(name, next))
}

// readConsumer reads the named consumer's position; ok is false when it
// never committed one.
func readConsumer(tx *bolt.Tx, name string) (next uint64, ok bool, err error) {
	l, err := readLayout(tx)
	if err != nil {
		return 0, false, err
	}
	b := tx.Bucket(store.BucketConsumers)
	if b == nil {
		return 0, false, corruptRecord(store.BucketConsumers, nil, "bucket missing")
	}
	key := []byte(name)
	v := b.Get(key)
	if v == nil {
		// A damaged key would make a consumer look new, and resume at
		// record 1: every position is verified (there are few) before
		// taking the name as new.
		err := b.ForEach(func(k, v []byte) error { _, _, err := decodeConsumer(&l, k, v); return err })
		return 1, false, err
	}
	return decodeConsumer(&l, key, v)
}

// decodeConsumer verifies and decodes a stored position.
func decodeConsumer(l *layout, key, v []byte) (next uint64, ok bool, err error) {
	p, err := l.unseal(store.BucketConsumers, key, v)
	if err != nil {
		return 0, false, err
	}
	if len(p) != 8 || binary.BigEndian.Uint64(p) == 0 {
		return 0, false, corruptRecord(store.BucketConsumers, key, "position is not a record number")
	}
	return binary.BigEndian.Uint64(p), true, nil
}

// ConsumerPosition returns the named consumer's committed position: the
// sequence number of the next record it will read, 1 (and ok false) when
// it never committed.
func (r *Reader) ConsumerPosition(name string) (next uint64, ok bool, err error) {
	err = r.db.View(func(tx *bolt.Tx) error {
		next, ok, err = readConsumer(tx, name)
		return err
	})
	return next, ok, err
}
