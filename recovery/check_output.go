package recovery

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

func beUint64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// checkOutput reads every chunk of the output log, going on past a
// damaged one: each chunk's checksum, that it starts where the one before
// ended (the first at record from: 1, or gc's output floor), its records'
// decoding, and the steps the records make (outputSteps; after gc's
// retention they are followed from the first progress statement kept).
func (c *checker) checkOutput(tx *bolt.Tx, l *layout, from uint64) error {
	b := tx.Bucket(store.BucketOutput)
	if b == nil {
		c.problem(CheckRecords, corruptRecord(store.BucketOutput, nil, "bucket missing"))
		return nil
	}
	var (
		chunks, unverified int
		next               = from // the record the next chunk must start at; 0 when unknown
		head               = true // the next chunk is the first
		steps              outputSteps
		m                  cdc.Message
	)
	if from > 1 {
		steps.reset() // the counts of the first step kept are partly gone
	}
	cur := b.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		chunks++
		if len(k) != 8 {
			c.problem(CheckRecords, corruptRecord(store.BucketOutput, k, "key is not 8 bytes"))
			next = 0
			continue
		}
		first := beUint64(k)
		wasHead := head
		head = false
		if first < l.outputFrom {
			unverified++
		}
		switch {
		case wasHead && first != from:
			c.problem(CheckRecords, corruptRecord(store.BucketOutput, k, "the log's first chunk starts at record %d, not %d", first, from))
			steps.reset()
		case next != 0 && first != next:
			c.problem(CheckRecords, corruptRecord(store.BucketOutput, k, "chunk starts at record %d, the one before ends at %d", first, next-1))
			steps.reset()
		}
		p, err := unsealKeyed(store.BucketOutput, k, v, l.outputFrom)
		if err != nil {
			c.problem(CheckRecords, err)
			next = 0
			steps.reset()
			continue
		}
		n, w := binary.Uvarint(p)
		if w <= 0 || n == 0 {
			c.problem(CheckRecords, corruptRecord(store.BucketOutput, k, "bad record count"))
			next = 0
			steps.reset()
			continue
		}
		next = first + n
		p = p[w:]
		for seq := first; seq < first+n; seq++ {
			size, w := binary.Uvarint(p)
			if w <= 0 || size > uint64(len(p)-w) {
				err = corruptRecord(store.BucketOutput, k, "record %d overruns its chunk", seq)
				break
			}
			if _, perr := cdc.ParseBinary(p[w:w+int(size)], &m); perr != nil {
				err = corruptRecord(store.BucketOutput, k, "record %d: %v", seq, perr)
				break
			}
			p = p[w+int(size):]
			c.rep.OutputRecords++
			if reason := steps.add(&m); reason != "" {
				c.problem(CheckRecords, corruptRecord(store.BucketOutput, k, "record %d: %s", seq, reason))
				steps.reset()
			}
		}
		if err == nil && len(p) > 0 {
			err = corruptRecord(store.BucketOutput, k, "%d bytes after the last record", len(p))
		}
		if err != nil {
			c.problem(CheckRecords, err)
			steps.reset()
		}
	}
	if reason := steps.end(); reason != "" {
		k, _ := cur.Last()
		c.problem(CheckRecords, corruptRecord(store.BucketOutput, k, "%s", reason))
	}
	c.count(string(store.BucketOutput), chunks, unverified)
	return nil
}

// outputSteps follows the output stream's steps, as the receiver emits
// them: a step's updates, in time order and within a time in canonical
// order (data, then diff), then its progress statements (one, or
// consecutive ones where a statement was split), each starting where the
// one before ended and counting exactly the updates released at each time
// it covers. After a damaged record it is reset and starts over at the
// next progress statement.
type outputSteps struct {
	known   bool   // upper holds the last progress statement's upper bound
	upper   uint64 // where the next step starts
	done    bool   // the last statement was unbounded: the stream is over
	inRun   bool   // the previous record was a progress statement
	pending map[uint64]uint64
	last    struct {
		ok   bool
		time uint64
		data []byte
		diff int64
	}
	lost bool // reset since the last progress statement: counts unknown
}

func (s *outputSteps) reset() {
	*s = outputSteps{pending: s.pending, lost: true}
	clear(s.pending)
}

// add takes the next record and returns what is wrong with it, if
// anything.
func (s *outputSteps) add(m *cdc.Message) string {
	if s.pending == nil {
		s.pending = map[uint64]uint64{}
	}
	if s.done {
		return "a record after the stream's final (unbounded) progress statement"
	}
	if m.Kind == cdc.KindProgress {
		return s.progress(&m.Progress)
	}
	if s.inRun {
		s.inRun = false
		if len(s.pending) > 0 {
			return fmt.Sprintf("%d updates released at times no progress statement covered", sum(s.pending))
		}
	}
	u := &m.Update
	if s.known && u.Time < s.upper {
		return fmt.Sprintf("update at time %d, below the frontier %d its step starts at", u.Time, s.upper)
	}
	if s.last.ok && (u.Time < s.last.time || u.Time == s.last.time && !canonicalBefore(s.last.data, s.last.diff, u.Data, u.Diff)) {
		return fmt.Sprintf("update at time %d out of order after one at time %d", u.Time, s.last.time)
	}
	s.last.ok, s.last.time, s.last.data, s.last.diff = true, u.Time, append(s.last.data[:0], u.Data...), u.Diff
	s.pending[u.Time]++
	return ""
}

func (s *outputSteps) progress(p *cdc.Progress) string {
	s.inRun = true
	defer func() { s.known, s.upper, s.done, s.lost = true, p.Upper, p.Unbounded, false }()
	if s.known && p.Lower != s.upper {
		return fmt.Sprintf("progress statement [%d, %d) does not start where the one before ended, %d", p.Lower, p.Upper, s.upper)
	}
	if s.lost {
		// The updates before it were in a damaged chunk.
		clear(s.pending)
		return ""
	}
	for _, c := range p.Counts {
		if got := s.pending[c.Time]; got != c.Count {
			return fmt.Sprintf("time %d: %d updates released, its progress statement counts %d", c.Time, got, c.Count)
		}
		delete(s.pending, c.Time)
	}
	for _, t := range slices.Sorted(maps.Keys(s.pending)) {
		if t >= p.Lower && (p.Unbounded || t < p.Upper) {
			return fmt.Sprintf("time %d: %d updates released, its progress statement counts none", t, s.pending[t])
		}
	}
	return ""
}

// end returns what is wrong with the log's end: updates no progress
// statement counted.
func (s *outputSteps) end() string {
	if len(s.pending) > 0 && !s.lost {
		return fmt.Sprintf("the log ends with %d updates no progress statement counts", sum(s.pending))
	}
	return ""
}

func canonicalBefore(data []byte, diff int64, data2 []byte, diff2 int64) bool {
	if c := bytes.Compare(data, data2); c != 0 {
		return c < 0
	}
	return diff < diff2
}

func sum(m map[uint64]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}
