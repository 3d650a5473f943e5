package recovery

import (
	"encoding/binary"
	"time"

	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// The output log's time marks say when its records were committed, so
// that retention can keep the records of the last 72 hours: bucket
// outputtimes, key = the sequence number of the first record of a commit
// (8 bytes BE), value = the commit's wall-clock time in Unix nanoseconds
// (8 bytes BE) sealed with a CRC-32C of key and value. A commit that
// releases records writes one when the last mark is at least markEvery
// old, so there are at most 86,400 a day, each a few bytes; gc deletes
// those below the output floor with the chunks.
//
// A mark (s, t) says that the records from s on were committed at t or
// later: every record below s was committed before t. So the records
// older than a cutoff are at least those below the last mark at or
// before it (ageFloor), to within markEvery.
const markEvery = time.Second

// timeMarks writes the marks; the commit goroutine owns it.
type timeMarks struct {
	last time.Time // the last mark written by this run
}

// mark writes a mark for a batch's records, when one is due.
func (m *timeMarks) mark(tx *bolt.Tx, o *outputRecords) error {
	if o.used == 0 || o.count() == 0 {
		return nil
	}
	now := time.Now()
	if !m.last.IsZero() && now.Sub(m.last) < markEvery {
		return nil
	}
	b, err := tx.CreateBucketIfNotExists(store.BucketOutputTimes)
	if err != nil {
		return err
	}
	b.FillPercent = 1.0 // ascending keys
	key := binary.BigEndian.AppendUint64(nil, o.chunks[0].first)
	if err := b.Put(key, checksum.Seal(key, binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano())))); err != nil {
		return err
	}
	m.last = now
	return nil
}

// decodeMark verifies and decodes a mark.
func decodeMark(k, v []byte) (seq uint64, at time.Time, err error) {
	if len(k) != 8 {
		return 0, at, corruptRecord(store.BucketOutputTimes, k, "key is not 8 bytes")
	}
	p, err := checksum.Unseal(k, v)
	if err != nil {
		return 0, at, corruptRecord(store.BucketOutputTimes, k, "%v", err)
	}
	if len(p) != 8 {
		return 0, at, corruptRecord(store.BucketOutputTimes, k, "value is %d bytes, not 8", len(p))
	}
	return binary.BigEndian.Uint64(k), time.Unix(0, int64(binary.BigEndian.Uint64(p))), nil
}

// ageFloor returns the first record that may have been committed at or
// after cutoff, as far as the marks tell (1 when none is older): every
// record below it is older than cutoff. It reads the marks oldest first
// and stops at the first one after cutoff, so that a clock that went back
// never lets it drop a record younger than cutoff.
func ageFloor(tx *bolt.Tx, cutoff time.Time) (uint64, error) {
	b := tx.Bucket(store.BucketOutputTimes)
	if b == nil {
		return 1, nil
	}
	floor := uint64(1)
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		seq, at, err := decodeMark(k, v)
		if err != nil {
			return 0, err
		}
		if at.After(cutoff) {
			break
		}
		floor = seq
	}
	return floor, nil
}

// deleteMarksBelow deletes the marks of records below floor.
func deleteMarksBelow(tx *bolt.Tx, floor uint64) error {
	b := tx.Bucket(store.BucketOutputTimes)
	if b == nil {
		return nil
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && len(k) == 8 && binary.BigEndian.Uint64(k) < floor; k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
