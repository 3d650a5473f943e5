package recovery

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// Retention says which output records gc may drop (GCOptions.RetainOutput):
// the zero value keeps every record, as a database always did. A limited
// retention lets gc drop the records that are older than it keeps, and
// that nothing else needs: gc never drops a record that a registered
// consumer has not committed, that an output file the database remembers
// (the current one, and the earlier ones it would catch up) lacks, or
// that a live stream may not have received (see outputFloor). It keeps
// the output log's last chunk too, whose last record the cross-checks
// read. Records are dropped in whole chunks (about 32 KiB each), so a
// few records more than asked may stay.
type Retention struct {
	// Limited is false in the zero value: keep every record.
	Limited bool
	// Records keeps the last Records records (0: no limit by count).
	Records uint64
	// Age keeps the records committed less than Age ago (0: no limit by
	// age), to within a second (see timeMarks in retention.go).
	Age time.Duration
}

// KeepAll keeps every output record: the zero Retention.
var KeepAll = Retention{}

// RetainRecords keeps the last n records (and what something needs).
func RetainRecords(n uint64) Retention { return Retention{Limited: true, Records: n} }

// RetainFor keeps the records committed less than d ago (and what
// something needs).
func RetainFor(d time.Duration) Retention { return Retention{Limited: true, Age: d} }

// ParseRetention reads a retention as `cdclog gc --retain-output` takes
// it: "all" (keep every record, the default), a count of records
// ("1000000", "0": drop every record nothing needs), or a Go duration
// ("72h", "30m").
func ParseRetention(s string) (Retention, error) {
	s = strings.TrimSpace(s)
	if s == "all" || s == "" {
		return KeepAll, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return RetainRecords(n), nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return Retention{}, fmt.Errorf("retention %q: give all, a number of records (1000000) or a duration (72h)", s)
	case d <= 0:
		return Retention{}, fmt.Errorf("retention %q: a duration must be positive", s)
	}
	return RetainFor(d), nil
}

// String returns the retention as ParseRetention reads it.
func (r Retention) String() string {
	switch {
	case !r.Limited:
		return "all"
	case r.Age > 0 && r.Records > 0:
		return fmt.Sprintf("%d records or %v", r.Records, r.Age)
	case r.Age > 0:
		return r.Age.String()
	}
	return strconv.FormatUint(r.Records, 10)
}

// outputFloor returns the record from which on the output log must stay
// under retention r at time now, and what holds it there (the lowest of
// these): r itself, a registered consumer's committed position, an output
// file's next record (the current file and each one the checkpoint
// remembers: going back to one catches it up from there), the first
// record a live stream may lack (LiveNext), and the log's last record.
func outputFloor(tx *bolt.Tx, cp *checkpoint, r Retention, now time.Time) (uint64, string, error) {
	if !r.Limited {
		return cp.outputFrom(), "the retention, which keeps every record (--retain-output all)", nil
	}
	end := cp.NextOutput
	floor, by := end, ""
	lower := func(seq uint64, what string) {
		if seq < floor {
			floor, by = seq, what
		}
	}
	consumers, err := listConsumers(tx, end)
	if err != nil {
		return 0, "", err
	}
	for _, c := range consumers {
		lower(c.Next, fmt.Sprintf("consumer %q, which has not committed record %d", c.Name, c.Next))
	}
	if cp.Sink.Name != "" {
		lower(cp.Sink.Next, fmt.Sprintf("output file %s, which lacks the records from %d on", cp.Sink.Name, cp.Sink.Next))
	}
	for _, f := range cp.Files {
		lower(f.Next, fmt.Sprintf("output file %s (an earlier one), which lacks the records from %d on", f.Name, f.Next))
	}
	if cp.LiveNext > 0 {
		lower(cp.LiveNext, fmt.Sprintf("the output stream, which may lack the records from %d on", cp.LiveNext))
	}
	if r.Records > 0 {
		lower(end-min(r.Records, end-1), fmt.Sprintf("the retention of the last %d records", r.Records))
	}
	if r.Age > 0 {
		af, err := ageFloor(tx, now.Add(-r.Age))
		if err != nil {
			return 0, "", err
		}
		lower(af, fmt.Sprintf("the retention of the records committed in the last %v", r.Age))
	}
	if end > 1 {
		lower(end-1, "the output log's last chunk, which gc always keeps")
	}
	return floor, by, nil
}

// dropOutput deletes the output chunks wholly below floor, and the time
// marks below the first chunk kept, which becomes cp.OutputFloor. It
// returns the chunks deleted.
func dropOutput(tx *bolt.Tx, cp *checkpoint, floor uint64) (int, error) {
	b := tx.Bucket(store.BucketOutput)
	if b == nil {
		return 0, corruptRecord(store.BucketOutput, nil, "bucket missing")
	}
	var doomed [][]byte
	c := b.Cursor()
	k, _ := c.First()
	for k != nil {
		next, _ := c.Next()
		if next == nil || len(next) != 8 || binary.BigEndian.Uint64(next) > floor {
			break // k's chunk holds record floor, or is the last
		}
		doomed = append(doomed, append([]byte(nil), k...))
		k = next
	}
	if k == nil || len(k) != 8 {
		return 0, nil // an empty log (a bad key is crossCheck's to report)
	}
	kept := binary.BigEndian.Uint64(k)
	for _, d := range doomed {
		if err := b.Delete(d); err != nil {
			return 0, fmt.Errorf("delete output chunk: %w", err)
		}
	}
	if err := deleteMarksBelow(tx, kept); err != nil {
		return 0, fmt.Errorf("delete output time marks: %w", err)
	}
	cp.OutputFloor = max(cp.OutputFloor, kept)
	return len(doomed), nil
}

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
