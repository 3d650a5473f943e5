package recovery

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// CheckOptions tune Check. The zero value waits store.DefaultLockTimeout
// for another process's lock and lists up to DefaultMaxProblems problems.
type CheckOptions struct {
	LockTimeout time.Duration
	// MaxProblems bounds the problems listed; the rest are only counted.
	MaxProblems int
}

// DefaultMaxProblems is how many problems a report lists by default.
const DefaultMaxProblems = 1000

// Validate reports options that Check refuses, as a *cdc.OptionError: a
// negative MaxProblems (zero, the zero value, means DefaultMaxProblems).
func (o CheckOptions) Validate() error {
	if o.MaxProblems < 0 {
		return &cdc.OptionError{Option: "--max-problems", Reason: "must be at least 1"}
	}
	return nil
}

// The checks Check runs, as named in CheckReport.Checks and Problem.Check.
const (
	// CheckBolt is bbolt's own consistency check of the file (Tx.Check:
	// pages reachable exactly once or free, keys in order), after a walk
	// over every key that bbolt's check would otherwise crash on.
	CheckBolt = "bbolt"
	// CheckRecords is every record of every bucket: its checksum, its
	// decoding, and how it fits its neighbours (chunks that follow one
	// another, a WAL chunk against its index record, the output's steps).
	CheckRecords = "records"
	// CheckCross is the checkpoint against the logs' ends (crossCheck).
	CheckCross = "cross-checks"
	// CheckReplay is the rebuild of the pending state that every open
	// does (the WAL's entries from the frontier to the memory horizon):
	// it must release nothing (recover.go's rebuild; the name is kept
	// for the reports of scripts).
	CheckReplay = "replay"
)

// Problem is one thing Check found wrong.
type Problem struct {
	// Check is the check that found it (CheckBolt, CheckRecords, ...).
	Check string `json:"check"`
	// Bucket and Key name the record, when the problem is in one.
	Bucket string `json:"bucket,omitempty"`
	Key    string `json:"key,omitempty"`
	Reason string `json:"reason"`
}

// String reads "records: bucket output, key 0000000000000001 (1): ...".
func (p Problem) String() string {
	switch {
	case p.Key != "":
		return fmt.Sprintf("%s: bucket %s, key %s: %s", p.Check, p.Bucket, p.Key, p.Reason)
	case p.Bucket != "":
		return fmt.Sprintf("%s: bucket %s: %s", p.Check, p.Bucket, p.Reason)
	}
	return p.Check + ": " + p.Reason
}

// BucketCheck counts the records Check read in one bucket.
type BucketCheck struct {
	Name    string `json:"name"`
	Records int    `json:"records"`
	// Unverified counts records written before checksums (a database
	// upgraded from schema 1), which have none to verify.
	Unverified int `json:"unverified"`
}

// CheckReport is what Check found. The JSON field names are stable.
type CheckReport struct {
	Path          string `json:"path"`
	SchemaVersion uint64 `json:"schema_version"`
	// OK is set when every check held.
	OK bool `json:"ok"`
	// Checks lists the checks that ran, in order; a check that could not
	// run (bbolt's, after the walk found a damaged page; the replay,
	// without a checkpoint to start from) is left out and a problem says
	// why.
	Checks []string `json:"checks"`
	// Pages is the file's size in pages (bbolt's high-water mark).
	Pages   int           `json:"pages"`
	Buckets []BucketCheck `json:"buckets"`
	// WALEntries and OutputRecords count the messages in the WAL's chunks
	// and the records in the output log.
	WALEntries    uint64 `json:"wal_entries"`
	OutputRecords uint64 `json:"output_records"`
	// OutputFrom is the first record of the output log: 1, or after gc's
	// retention the first one it kept (the records before it are gone,
	// and not a problem).
	OutputFrom uint64 `json:"output_from"`
	// Unknown lists top-level buckets cdclog does not know; they are
	// walked by bbolt's check but not otherwise read.
	Unknown         []string  `json:"unknown_buckets,omitempty"`
	Problems        []Problem `json:"problems"`
	ProblemsOmitted int       `json:"problems_omitted"`
}

// Check reads the whole database at path, read-only, as 'cdclog check'
// does: bbolt's consistency check; every record of every bucket against
// its checksum (records written before checksums are counted as
// unverified) and its encoding; the chunks of each log against one
// another; the output log's steps (each progress statement starts where
// the one before ended and counts exactly the updates released before
// it, which are in order); the cross-checks every open runs; and the
// rebuild of the pending state from the WAL that every open does. It goes on past each problem, so
// that the report lists them all (up to MaxProblems).
//
// The error is for a database Check cannot open (missing, locked,
// foreign, or so damaged that bbolt refuses it); damage found inside is
// in the report, whose OK is then false. Check never writes.
func Check(path string, o CheckOptions) (CheckReport, error) {
	if err := o.Validate(); err != nil {
		return CheckReport{}, err
	}
	db, err := store.Open(path, store.Options{ReadOnly: true, LockTimeout: o.LockTimeout})
	if err != nil {
		return CheckReport{}, err
	}
	defer db.Close()
	c := &checker{db: db, rep: CheckReport{Path: path, Problems: []Problem{}}, max: o.MaxProblems, seen: map[Problem]bool{}}
	if c.max <= 0 {
		c.max = DefaultMaxProblems
	}
	err = db.View(func(tx *bolt.Tx) error {
		c.rep.SchemaVersion = store.Schema(tx)
		c.rep.Pages = int(tx.Size() / int64(tx.DB().Info().PageSize))
		c.run(tx)
		return nil
	})
	if err != nil {
		c.problem(CheckRecords, err)
	}
	c.rep.OK = len(c.rep.Problems) == 0 && c.rep.ProblemsOmitted == 0
	return c.rep, nil
}

// checker accumulates a report.
type checker struct {
	db   *store.DB
	rep  CheckReport
	max  int
	seen map[Problem]bool
}

// problem records err as a problem of check; a *store.CorruptError gives
// its bucket and key. The same problem found twice (a damaged record seen
// by two checks) is listed once.
func (c *checker) problem(check string, err error) {
	p := Problem{Check: check, Reason: err.Error()}
	var ce *store.CorruptError
	if errors.As(err, &ce) {
		p.Bucket, p.Reason = ce.Bucket, ce.Reason
		if ce.Key != nil {
			p.Key = store.FormatKey(ce.Key)
		}
	}
	dedup := p
	dedup.Check = ""
	if c.seen[dedup] {
		return
	}
	c.seen[dedup] = true
	if len(c.rep.Problems) >= c.max {
		c.rep.ProblemsOmitted++
		return
	}
	c.rep.Problems = append(c.rep.Problems, p)
}

// guard runs one check, turning a bbolt panic (a damaged page) into a
// problem; it reports whether the check ran to its end.
func (c *checker) guard(check string, fn func() error) bool {
	if err := store.Guard(fn); err != nil {
		c.problem(check, err)
		return false
	}
	return true
}

func (c *checker) count(name string, records, unverified int) {
	c.rep.Buckets = append(c.rep.Buckets, BucketCheck{Name: name, Records: records, Unverified: unverified})
}

func (c *checker) run(tx *bolt.Tx) {
	if c.guard(CheckBolt, func() error { return c.walk(tx) }) {
		c.boltCheck(tx)
	}
	c.rep.Checks = append(c.rep.Checks, CheckRecords)
	l, err := readLayout(tx)
	if err != nil {
		c.problem(CheckRecords, err)
		l = layout{schema: store.SchemaVersion, sealed: true}
	}
	var cp checkpoint
	cpOK, stored := false, false
	c.guard(CheckRecords, func() error {
		cp, stored, err = loadCheckpoint(tx)
		if err != nil {
			c.problem(CheckRecords, err)
			return nil
		}
		if !stored {
			cp = newCheckpoint(0)
		}
		cpOK = true
		c.count(string(store.BucketCheckpoint), boolInt(stored), boolInt(stored && !l.sealed))
		return nil
	})
	walOK := c.guard(CheckRecords, func() error { return c.checkWAL(tx, &l, &cp, cpOK) })
	c.rep.OutputFrom = 1
	if cpOK {
		c.rep.OutputFrom = cp.outputFrom()
	}
	c.guard(CheckRecords, func() error { return c.checkOutput(tx, &l, c.rep.OutputFrom) })
	c.guard(CheckRecords, func() error { return c.checkTimeMarks(tx) })
	c.guard(CheckRecords, func() error { return c.checkQuarantine(tx, &l) })
	c.guard(CheckRecords, func() error { return c.checkConsumers(tx, &l) })
	if !cpOK {
		return
	}
	c.rep.Checks = append(c.rep.Checks, CheckCross)
	c.guard(CheckCross, func() error {
		if err := crossCheck(tx, &cp, stored); err != nil {
			c.problem(CheckCross, err)
		}
		return nil
	})
	if !walOK {
		return
	}
	c.rep.Checks = append(c.rep.Checks, CheckReplay)
	c.guard(CheckReplay, func() error {
		// A read-only database has no writer to wait for: the rebuild's
		// own read transactions may run inside this one.
		if _, _, err := rebuild(c.db, &l, &cp, 0, false); err != nil {
			c.problem(CheckReplay, err)
		}
		return nil
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// known lists the buckets cdclog reads.
var known = [][]byte{store.BucketMeta, store.BucketWAL, store.BucketWALSeq, store.BucketCheckpoint,
	store.BucketOutput, store.BucketQuarantine, store.BucketConsumers, store.BucketOutputTimes}

// walk visits every key of every bucket, so that a damaged page panics
// here, where it is recovered, rather than in bbolt's check, which runs
// on a goroutine of its own where a panic ends the process. It also
// checks that the page counts bbolt would walk fit in the file: a damaged
// overflow count would have bbolt's check mark billions of pages.
func (c *checker) walk(tx *bolt.Tx) error {
	pages := 0
	err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		if !slices.ContainsFunc(known, func(k []byte) bool { return string(k) == string(name) }) {
			c.rep.Unknown = append(c.rep.Unknown, string(name))
		}
		st := b.Stats()
		pages += st.BranchPageN + st.BranchOverflowN + st.LeafPageN + st.LeafOverflowN
		return walkBucket(b)
	})
	if err != nil {
		return err
	}
	if pages > c.rep.Pages {
		return fmt.Errorf("the buckets' pages (%d) outnumber the file's (%d): a page header is damaged", pages, c.rep.Pages)
	}
	return nil
}

func walkBucket(b *bolt.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				return walkBucket(nested)
			}
		}
		return nil
	})
}

// boltCheck runs bbolt's Tx.Check and reads all it reports, unless the
// headers it asserts on its own goroutine are damaged (a panic there ends
// the process): those are problems of their own.
func (c *checker) boltCheck(tx *bolt.Tx) {
	c.rep.Checks = append(c.rep.Checks, CheckBolt)
	errs, fatal := c.db.CheckHeaders()
	for _, err := range errs {
		c.problem(CheckBolt, err)
	}
	if fatal {
		return
	}
	for err := range tx.Check() {
		c.problem(CheckBolt, err)
	}
}

// checkWAL reads the whole WAL (wal.Log.Check), with each entry's body
// decoded and its source known to the checkpoint. It reports whether the
// WAL had no problem.
func (c *checker) checkWAL(tx *bolt.Tx, l *layout, cp *checkpoint, cpOK bool) error {
	before := len(c.rep.Problems) + c.rep.ProblemsOmitted
	var m cdc.Message
	st := l.wal.Check(tx, func(e *wal.Entry) error {
		if _, err := cdc.ParseBinary(e.Body, &m); err != nil {
			return err
		}
		if cpOK && e.Source >= uint64(len(cp.Sources)) {
			return fmt.Errorf("source %d, but the checkpoint names %d sources", e.Source, len(cp.Sources))
		}
		return nil
	}, func(ce *store.CorruptError) { c.problem(CheckRecords, ce) })
	c.count(string(store.BucketWAL), st.Indexed, st.LegacyIndex)
	c.count(string(store.BucketWALSeq), st.Chunks, st.Legacy)
	c.rep.WALEntries = st.Entries
	if len(c.rep.Problems)+c.rep.ProblemsOmitted > before {
		return errors.New("the WAL is damaged: its replay is not checked")
	}
	return nil
}

// checkQuarantine reads every quarantine record.
func (c *checker) checkQuarantine(tx *bolt.Tx, l *layout) error {
	b := tx.Bucket(store.BucketQuarantine)
	if b == nil {
		c.problem(CheckRecords, corruptRecord(store.BucketQuarantine, nil, "bucket missing"))
		return nil
	}
	n, unverified := 0, 0
	cur := b.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		n++
		if len(k) == 8 && beUint64(k) < l.quarantineFrom {
			unverified++
		}
		if _, err := readQuarantine(k, v, l.quarantineFrom); err != nil {
			c.problem(CheckRecords, err)
		} else if beUint64(k) != uint64(n) {
			c.problem(CheckRecords, corruptRecord(store.BucketQuarantine, k, "record %d where record %d belongs", beUint64(k), n))
		}
	}
	c.count(string(store.BucketQuarantine), n, unverified)
	return nil
}

// checkConsumers reads every consumer's position.
func (c *checker) checkConsumers(tx *bolt.Tx, l *layout) error {
	b := tx.Bucket(store.BucketConsumers)
	if b == nil {
		c.problem(CheckRecords, corruptRecord(store.BucketConsumers, nil, "bucket missing"))
		return nil
	}
	n := 0
	err := b.ForEach(func(k, v []byte) error {
		n++
		if _, _, err := decodeConsumer(l, k, v); err != nil {
			c.problem(CheckRecords, err)
		}
		return nil
	})
	c.count(string(store.BucketConsumers), n, boolInt(!l.sealed)*n)
	return err
}

// checkTimeMarks reads every output time mark (a database from before
// them has no bucket). The marks' keys ascend with the records; their
// times may not, if the clock went back, which is no damage.
func (c *checker) checkTimeMarks(tx *bolt.Tx) error {
	b := tx.Bucket(store.BucketOutputTimes)
	if b == nil {
		return nil
	}
	n := 0
	err := b.ForEach(func(k, v []byte) error {
		n++
		if _, _, err := decodeMark(k, v); err != nil {
			c.problem(CheckRecords, err)
		}
		return nil
	})
	c.count(string(store.BucketOutputTimes), n, 0)
	return err
}
