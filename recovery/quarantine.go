package recovery

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/checksum"
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

// writeQuarantine stores the records, each under its sequence number (8
// bytes BE): a CRC-32C of the key and the msgpack encoding, then the
// encoding (internal/checksum's sealed value).
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
		k := binary.BigEndian.AppendUint64(nil, recs[i].Seq)
		if err := b.Put(k, checksum.Seal(k, v)); err != nil {
			return fmt.Errorf("write quarantine record: %w", err)
		}
	}
	return nil
}

// scanQuarantine calls fn for each record, in order, verifying each: its
// checksum (in a database upgraded from schema 1, from the first record
// written with one), its decoding, and that the records are numbered 1, 2,
// 3... under keys that say the same.
func scanQuarantine(tx *bolt.Tx, fn func(*QuarantineRecord) error) error {
	l, err := readLayout(tx)
	if err != nil {
		return err
	}
	b := tx.Bucket(store.BucketQuarantine)
	if b == nil {
		return corruptRecord(store.BucketQuarantine, nil, "bucket missing")
	}
	c := b.Cursor()
	want := uint64(1)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		r, err := readQuarantine(k, v, l.quarantineFrom)
		if err != nil {
			return err
		}
		if r.Seq != want {
			return corruptRecord(store.BucketQuarantine, k, "record %d where record %d belongs", r.Seq, want)
		}
		want++
		if err := fn(&r); err != nil {
			return err
		}
	}
	return nil
}

// readQuarantine verifies and decodes the record v stored under key k.
func readQuarantine(k, v []byte, checksumsFrom uint64) (QuarantineRecord, error) {
	v, err := unsealKeyed(store.BucketQuarantine, k, v, checksumsFrom)
	if err != nil {
		return QuarantineRecord{}, err
	}
	var qv quarantineValue
	if err := cdc.CheckMsgpackBounds(v); err != nil { // else damaged counts can exhaust memory
		return QuarantineRecord{}, corruptRecord(store.BucketQuarantine, k, "%v", err)
	}
	if err := msgpack.Unmarshal(v, &qv); err != nil {
		return QuarantineRecord{}, corruptRecord(store.BucketQuarantine, k, "%v", err)
	}
	r, err := qv.record()
	if err != nil {
		return QuarantineRecord{}, corruptRecord(store.BucketQuarantine, k, "%v", err)
	}
	if r.Seq != binary.BigEndian.Uint64(k) {
		return r, corruptRecord(store.BucketQuarantine, k, "holds record %d", r.Seq)
	}
	return r, nil
}

// Input read again (stdin sent twice, a file rewritten in place and read
// from its start) meets its bad messages again. Each is quarantined once:
// a reject equal to one already set aside (same position, bytes and
// reason) is not stored again. The apply goroutine keeps a set of the
// rejects' digests, filled from the quarantine bucket the first time a
// run quarantines anything, and a reject is known by a 128-bit digest of
// its fields, at which size two different rejects do not collide in any
// quarantine that fits on a disk.

// rejectDigest identifies a reject.
type rejectDigest [16]byte

func digestOf(rj *cdc.Reject) rejectDigest {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(n[:0], uint64(len(b))))
		h.Write(b)
	}
	field([]byte(rj.Pos.Source))
	field(binary.BigEndian.AppendUint64(nil, uint64(rj.Pos.Line)))
	field(binary.BigEndian.AppendUint64(nil, uint64(rj.Pos.Offset)))
	field([]byte(rj.Reason))
	field(rj.Raw)
	if rj.Truncated {
		field([]byte{1})
	}
	var d rejectDigest
	copy(d[:], h.Sum(nil))
	return d
}

// quarantinedBefore reports whether rj is already quarantined (stored, or
// set aside by this run), and remembers it otherwise. It is called on the
// apply goroutine.
func (p *Processor) quarantinedBefore(rj *cdc.Reject) (bool, error) {
	if p.quarantined == nil {
		p.quarantined = map[rejectDigest]struct{}{}
		err := p.db.View(func(tx *bolt.Tx) error {
			return scanQuarantine(tx, func(r *QuarantineRecord) error {
				p.quarantined[digestOf(&r.Reject)] = struct{}{}
				return nil
			})
		})
		if err != nil {
			p.quarantined = nil
			return false, err
		}
	}
	d := digestOf(rj)
	if _, ok := p.quarantined[d]; ok {
		return true, nil
	}
	p.quarantined[d] = struct{}{}
	return false, nil
}
