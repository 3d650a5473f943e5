package recovery

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	"github.com/vmihailenco/msgpack/v5"
	bolt "go.etcd.io/bbolt"
)

// QuarantineRecord is one input message set aside under policy Quarantine:
// the cdc.Reject, numbered from 1 in the order it was set aside, and when.
type QuarantineRecord struct {
	Seq  uint64
	Time time.Time
	cdc.Reject
}

// quarantineValue is a QuarantineRecord as stored (msgpack).
type quarantineValue struct {
	Seq       uint64 `msgpack:"seq"`
	Source    string `msgpack:"source"`
	Line      int64  `msgpack:"line"`
	Offset    int64  `msgpack:"offset"`
	Reason    string `msgpack:"reason"`
	Raw       []byte `msgpack:"raw"`
	Truncated bool   `msgpack:"truncated,omitempty"`
	// Time is RFC 3339 with nanoseconds, UTC.
	Time string `msgpack:"time"`
}

func (q *QuarantineRecord) value() quarantineValue {
	return quarantineValue{Seq: q.Seq, Source: q.Pos.Source, Line: q.Pos.Line, Offset: q.Pos.Offset,
		Reason: q.Reason, Raw: q.Raw, Truncated: q.Truncated, Time: q.Time.UTC().Format(time.RFC3339Nano)}
}

func (v *quarantineValue) record() (QuarantineRecord, error) {
	t, err := time.Parse(time.RFC3339Nano, v.Time)
	if err != nil {
		return QuarantineRecord{}, fmt.Errorf("time %q: %w", v.Time, err)
	}
	return QuarantineRecord{Seq: v.Seq, Time: t, Reject: cdc.Reject{
		Pos: cdc.Pos{Source: v.Source, Line: v.Line, Offset: v.Offset}, Raw: v.Raw, Truncated: v.Truncated, Reason: v.Reason,
	}}, nil
}

func writeQuarantine(tx *bolt.Tx, recs []QuarantineRecord) error {
	if len(recs) == 0 {
		return nil
	}
	b := tx.Bucket(store.BucketQuarantine)
	b.FillPercent = 1.0
	for i := range recs {
		qv := recs[i].value()
		v, err := msgpack.Marshal(&qv)
		if err != nil {
			return fmt.Errorf("encode quarantine record: %w", err)
		}
		if err := b.Put(binary.BigEndian.AppendUint64(nil, recs[i].Seq), v); err != nil {
			return fmt.Errorf("write quarantine record: %w", err)
		}
	}
	return nil
}

func scanQuarantine(tx *bolt.Tx, fn func(*QuarantineRecord) error) error {
	c := tx.Bucket(store.BucketQuarantine).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var qv quarantineValue
		if err := msgpack.Unmarshal(v, &qv); err != nil {
			return fmt.Errorf("%w: quarantine record %x: %v", ErrCorrupt, k, err)
		}
		r, err := qv.record()
		if err != nil {
			return fmt.Errorf("%w: quarantine record %x: %v", ErrCorrupt, k, err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return nil
}
