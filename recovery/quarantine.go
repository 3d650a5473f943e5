package recovery

import (
	"encoding/binary"
	"fmt"

	"github.com/cdclog/cdclog/store"
	"github.com/vmihailenco/msgpack/v5"
	bolt "go.etcd.io/bbolt"
)

// QuarantineRecord is one input message set aside under policy Quarantine.
type QuarantineRecord = quarantineRecord

type quarantineRecord struct {
	Seq    uint64 `msgpack:"seq" json:"seq"`
	Source string `msgpack:"source" json:"source"`
	Line   int64  `msgpack:"line" json:"line"`
	Offset int64  `msgpack:"offset" json:"offset"`
	Reason string `msgpack:"reason" json:"reason"`
	Raw    []byte `msgpack:"raw" json:"raw"`
	// Time is when the record was set aside (RFC 3339, UTC).
	Time string `msgpack:"time" json:"time"`
}

func writeQuarantine(tx *bolt.Tx, recs []quarantineRecord) error {
	if len(recs) == 0 {
		return nil
	}
	b := tx.Bucket(store.BucketQuarantine)
	b.FillPercent = 1.0
	for i := range recs {
		v, err := msgpack.Marshal(&recs[i])
		if err != nil {
			return fmt.Errorf("encode quarantine record: %w", err)
		}
		if err := b.Put(binary.BigEndian.AppendUint64(nil, recs[i].Seq), v); err != nil {
			return fmt.Errorf("write quarantine record: %w", err)
		}
	}
	return nil
}

func scanQuarantine(tx *bolt.Tx, fn func(*quarantineRecord) error) error {
	c := tx.Bucket(store.BucketQuarantine).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var r quarantineRecord
		if err := msgpack.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("%w: quarantine record %x: %v", ErrCorrupt, k, err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return nil
}
