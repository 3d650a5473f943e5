package recovery

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// damageFixture builds a small database holding every kind of record: a
// stream stuck on a withheld update (so that the WAL holds pending
// entries above the frontier), two quarantined messages, a consumer's
// position; compacted, so that copies are cheap. It returns the file's
// bytes and the messages that complete the stream.
func damageFixture(t *testing.T) (db []byte, more []cdc.Message) {
	t.Helper()
	path := dbPath(t)
	p := openTest(t, path, Options{OnError: cdc.Quarantine, BatchMessages: 100})
	var held cdc.Message
	var msgs []cdc.Message
	for _, m := range mangled(41, cleanStream(41, 0, 600)) {
		if m.Kind == cdc.KindUpdate && m.Update.Time == 500 && held.Kind == 0 {
			held = m
			continue
		}
		if m.Kind == cdc.KindUpdate && m.Update.Time == 500 && string(m.Update.Data) == string(held.Update.Data) {
			continue
		}
		msgs = append(msgs, m)
	}
	bad := cdc.NewUpdate([]byte(`"bad"`), 7, 0) // a zero diff: quarantined
	msgs = append(msgs[:300], append([]cdc.Message{bad}, msgs[300:]...)...)
	msgs = append(msgs, cdc.NewUpdate([]byte(`"bad"`), 8, 0)) // another (the same one again is quarantined once)
	appendAll(t, p, msgs, 97)
	c, err := p.Consumer("audit")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if f, _ := p.Frontier(); f != 500 {
		t.Fatalf("frontier %d, want 500", f)
	}
	p.Close()
	if _, err := GC(path, GCOptions{KeepTimes: math.MaxUint64}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, append(cleanStream(41, 600, 650), held)
}

// location is where a record's key and value lie in a database file.
type location struct {
	bucket, key []byte
	keyAt, at   int // file offsets of the key and the value
	size        int // of the value
	last        bool
}

// locate finds in the file the stored key and value of each record pick
// chooses from each bucket. The file must be compacted (no stale copies in
// free pages), and each value must occur once in it; a leaf holds each
// key just before its value.
func locate(t *testing.T, path string, pick func(bucket, k []byte, i, n int) bool) []location {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var locs []location
	db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			n := b.Stats().KeyN
			i := 0
			return b.ForEach(func(k, v []byte) error {
				if pick(name, k, i, n) {
					kv := append(append([]byte(nil), k...), v...)
					if c := bytes.Count(file, kv); c != 1 {
						t.Fatalf("%s %x occurs %d times in the file", name, k, c)
					}
					at := bytes.Index(file, kv) + len(k)
					locs = append(locs, location{append([]byte(nil), name...), append([]byte(nil), k...), at - len(k), at, len(v), i == n-1})
				}
				i++
				return nil
			})
		})
	})
	return locs
}

// damageReader is one way to read a database; answer renders what it
// read, to compare with the answer on the undamaged database.
type damageReader struct {
	name string
	read func(t *testing.T, path string, more []cdc.Message) (answer string, err error)
}

func renderJSON(msgs ...cdc.Message) string {
	var b []byte
	for i := range msgs {
		b = append(cdc.AppendJSON(b, &msgs[i]), '\n')
	}
	return string(b)
}

// withReader runs fn on a Reader of path.
func withReader(path string, fn func(r *Reader) (string, error)) (string, error) {
	r, err := OpenReader(path, time.Second)
	if err != nil {
		return "", err
	}
	defer r.Close()
	return fn(r)
}

var damageReaders = []damageReader{
	{"open for ingest", func(t *testing.T, path string, more []cdc.Message) (string, error) {
		p, err := Open(path, Options{NoSync: true, Logger: quietLogger()})
		if err != nil {
			return "", err
		}
		from := p.OutputEnd()
		_, err = p.Append(context.Background(), more, nil)
		var recs []Record
		if err == nil {
			recs, err = p.readRecords(from, 1<<20)
		}
		if cerr := p.Close(); err == nil {
			err = cerr
		}
		var msgs []cdc.Message
		for _, r := range recs {
			msgs = append(msgs, r.Msg)
		}
		return renderJSON(msgs...), err
	}},
	{"inspect status", func(t *testing.T, path string, _ []cdc.Message) (string, error) {
		return withReader(path, func(r *Reader) (string, error) {
			s, err := r.Status()
			ptrs := fmt.Sprint(derefOr(s.FirstIncompleteTime), derefOr(s.ExpectedUpdates), derefOr(s.WAL.MinTime), derefOr(s.WAL.MaxTime))
			s.Path, s.FileBytes = "", 0
			s.FirstIncompleteTime, s.ExpectedUpdates, s.WAL.MinTime, s.WAL.MaxTime = nil, nil, nil, nil
			return fmt.Sprintf("%+v %s", s, ptrs), err
		})
	}},
	{"inspect pending", func(t *testing.T, path string, _ []cdc.Message) (string, error) {
		return withReader(path, func(r *Reader) (string, error) { p, err := r.Pending(); return fmt.Sprintf("%+v", p), err })
	}},
	{"inspect wal", func(t *testing.T, path string, _ []cdc.Message) (string, error) {
		return withReader(path, func(r *Reader) (string, error) {
			var b strings.Builder
			err := r.WAL(0, math.MaxUint64, func(e *WALEntry) error {
				fmt.Fprintf(&b, "%d %d %v %s", e.Time, e.Arrival, e.Pos, renderJSON(e.Msg))
				return nil
			})
			return b.String(), err
		})
	}},
	{"replay", func(t *testing.T, path string, _ []cdc.Message) (string, error) {
		return withReader(path, func(r *Reader) (string, error) {
			var b strings.Builder
			err := r.Records(1, func(rec *Record) error { b.WriteString(renderJSON(rec.Msg)); return nil })
			return b.String(), err
		})
	}},
	{"inspect quarantine", func(t *testing.T, path string, _ []cdc.Message) (string, error) {
		return withReader(path, func(r *Reader) (string, error) {
			var b strings.Builder
			err := r.Quarantine(func(q *QuarantineRecord) error {
				fmt.Fprintf(&b, "%d %v %s %q\n", q.Seq, q.Pos, q.Reason, q.Raw)
				return nil
			})
			return b.String(), err
		})
	}},
	{"replay --verify", func(t *testing.T, path string, _ []cdc.Message) (string, error) {
		return withReader(path, func(r *Reader) (string, error) { v, err := r.Verify(); return fmt.Sprintf("%+v", v), err })
	}},
	{"replay --rederive", func(t *testing.T, path string, _ []cdc.Message) (string, error) {
		return withReader(path, func(r *Reader) (string, error) {
			var b strings.Builder
			err := r.Rederive(func(m *cdc.Message) error { b.WriteString(renderJSON(*m)); return nil })
			return b.String(), err
		})
	}},
	{"consumer", func(t *testing.T, path string, _ []cdc.Message) (string, error) {
		return withReader(path, func(r *Reader) (string, error) {
			next, ok, err := r.ConsumerPosition("audit")
			return fmt.Sprint(next, ok), err
		})
	}},
	{"gc", func(t *testing.T, path string, _ []cdc.Message) (string, error) {
		res, err := GC(path, GCOptions{NoCompact: true, LockTimeout: time.Second})
		return fmt.Sprintf("%d %d", res.Floor, res.ChunksDeleted), err
	}},
}

func derefOr(p *uint64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestEveryReaderReportsAFlippedBitInEachKindOfRecord: for a record of
// each kind (WAL chunks below and above the frontier, their index records,
// the first and last output chunks, the checkpoint, a quarantine record,
// a consumer's position), a bit flipped in the file where its value is
// stored (at its start, middle and end) makes every reader either fail
// with a *CorruptError naming the record's bucket and key, or give the
// answer it gives on the undamaged database: never another answer. (A
// reader that never reads the record, such as ingest for an old output
// chunk, answers right.) Check always finds the damage, naming the
// record. A flipped bit in a key is reported as corruption too (the
// checksum covers the key), or does not change the answer.
func TestEveryReaderReportsAFlippedBitInEachKindOfRecord(t *testing.T) {
	good, more := damageFixture(t)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	want := map[string]string{}
	for _, rd := range damageReaders {
		ans, err := rd.read(t, write("good.db", good), more)
		if err != nil {
			t.Fatalf("%s on the undamaged database: %v", rd.name, err)
		}
		want[rd.name] = ans
	}
	if rep, err := Check(write("good.db", good), CheckOptions{}); err != nil || !rep.OK {
		t.Fatalf("check of the undamaged database: %+v, %v", rep, err)
	}
	locs := locate(t, write("good.db", good), func(b, k []byte, i, n int) bool {
		switch string(b) {
		case "wal", "walseq", "output":
			return i == 0 || i == n-1
		case "checkpoint", "consumers":
			return true
		case "quarantine":
			return i == 0
		}
		return false
	})
	if len(locs) != 9 {
		t.Fatalf("located %d records, want 9", len(locs))
	}
	// The readers that read each record (besides check), so must fail
	// when its value is damaged: every open reads the checkpoint and the
	// logs' ends (crossCheck); the replay of the WAL from the frontier (at
	// open for ingest, and for status) its last index record; and an open
	// for ingest, as inspect status, every index record (the WAL's
	// figures, read once at open).
	opens := []string{"open for ingest", "inspect status", "inspect pending", "inspect wal", "replay",
		"inspect quarantine", "replay --verify", "replay --rederive", "consumer", "gc"}
	mustFail := map[string][]string{
		"checkpoint": opens, "walseq last": opens, "output last": opens,
		"wal last":   {"open for ingest", "inspect status", "inspect pending", "inspect wal"},
		"consumers":  {"consumer"},
		"quarantine": {"inspect quarantine"},
		"output":     {"replay", "replay --verify"},
		"walseq":     {"inspect wal", "replay --verify", "replay --rederive"},
		"wal":        {"open for ingest", "inspect status", "inspect wal", "gc"},
	}
	for _, loc := range locs {
		flips := []struct {
			what string
			at   int
		}{{"value start", loc.at}, {"value middle", loc.at + loc.size/2}, {"value end", loc.at + loc.size - 1}, {"key end", loc.at - 1}}
		for _, f := range flips {
			name := fmt.Sprintf("%s %s %s", loc.bucket, store.FormatKey(loc.key), f.what)
			bad := append([]byte(nil), good...)
			bad[f.at] ^= 0x01
			inKey := f.at < loc.at
			kind := string(loc.bucket)
			if loc.last && (kind == "wal" || kind == "walseq" || kind == "output") {
				kind += " last"
			}
			for _, rd := range damageReaders {
				path := write("bad.db", bad)
				ans, err := rd.read(t, path, more)
				if err == nil && !inKey && slices.Contains(mustFail[kind], rd.name) {
					t.Errorf("%s: %s read the damaged record without an error", name, rd.name)
				}
				if err == nil {
					if ans != want[rd.name] {
						t.Errorf("%s: %s gave another answer, without an error", name, rd.name)
					}
					continue
				}
				var ce *CorruptError
				switch {
				case inKey && !errors.Is(err, ErrCorrupt):
					// A damaged key can also break bbolt's page order,
					// which bbolt reports as a damaged page.
					t.Errorf("%s: %s: %v, want a corruption error", name, rd.name, err)
				case inKey:
				case !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt):
					t.Errorf("%s: %s: %v, want a *CorruptError", name, rd.name, err)
				case ce.Bucket != string(loc.bucket) || string(ce.Key) != string(loc.key):
					t.Errorf("%s: %s: %v names another record", name, rd.name, err)
				}
			}
			rep, err := Check(write("bad.db", bad), CheckOptions{})
			if err != nil || rep.OK {
				t.Errorf("%s: check: ok %v, %v", name, rep.OK, err)
				continue
			}
			found := false
			for _, p := range rep.Problems {
				found = found || inKey || p.Bucket == string(loc.bucket) && p.Key == store.FormatKey(loc.key)
			}
			if !found {
				t.Errorf("%s: check does not name the record: %v", name, rep.Problems)
			}
		}
	}
}

// TestCheckPassesAHealthyDatabaseAndCountsItsRecords: Check finds nothing
// wrong in a database with every kind of record, runs every check, and
// counts what it read; the schema 1 database passes too, its records
// counted as unverified.
func TestCheckPassesAHealthyDatabaseAndCountsItsRecords(t *testing.T) {
	good, _ := damageFixture(t)
	path := filepath.Join(t.TempDir(), "state.db")
	os.WriteFile(path, good, 0o600)
	rep, err := Check(path, CheckOptions{})
	if err != nil || !rep.OK || len(rep.Problems) != 0 || strings.Join(rep.Checks, ",") != "bbolt,records,cross-checks,replay" {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	counts := map[string]BucketCheck{}
	for _, b := range rep.Buckets {
		counts[b.Name] = b
	}
	if counts["checkpoint"].Records != 1 || counts["quarantine"].Records != 2 || counts["consumers"].Records != 1 ||
		counts["walseq"].Records == 0 || counts["walseq"].Records != counts["wal"].Records || rep.WALEntries == 0 || rep.OutputRecords == 0 {
		t.Fatalf("counts: %+v", rep)
	}
	for _, b := range rep.Buckets {
		if b.Unverified != 0 {
			t.Fatalf("a schema %d database has unverified records: %+v", store.SchemaVersion, b)
		}
	}
	rep, err = Check(schema1Copy(t), CheckOptions{})
	if err != nil || !rep.OK || rep.SchemaVersion != 1 {
		t.Fatalf("check of the schema 1 database: %+v, %v", rep, err)
	}
	for _, b := range rep.Buckets {
		if b.Unverified != b.Records {
			t.Fatalf("schema 1: %+v, want every record unverified", b)
		}
	}
}

// TestCheckListsEveryDamagedRecordAndBoundsTheList: two damaged records
// are two problems; MaxProblems 1 lists one and counts the other.
func TestCheckListsEveryDamagedRecordAndBoundsTheList(t *testing.T) {
	good, _ := damageFixture(t)
	path := filepath.Join(t.TempDir(), "state.db")
	locs := func() []location {
		os.WriteFile(path, good, 0o600)
		return locate(t, path, func(b, k []byte, i, n int) bool { return string(b) == "output" && i < 2 })
	}()
	bad := append([]byte(nil), good...)
	for _, l := range locs {
		bad[l.at+l.size/2] ^= 0x10
	}
	os.WriteFile(path, bad, 0o600)
	rep, err := Check(path, CheckOptions{})
	if err != nil || rep.OK || len(rep.Problems) != 2 || rep.Problems[0].Key != store.FormatKey(locs[0].key) || rep.Problems[1].Key != store.FormatKey(locs[1].key) {
		t.Fatalf("check: %+v, %v", rep.Problems, err)
	}
	rep, _ = Check(path, CheckOptions{MaxProblems: 1})
	if rep.OK || len(rep.Problems) != 1 || rep.ProblemsOmitted != 1 {
		t.Fatalf("check with MaxProblems 1: %+v", rep)
	}
}

// TestCheckReportsADamagedMetaPageWithoutPanicking: bbolt opens a file
// one of whose meta pages is zeroed, torn or flipped (it reads the other
// one), and its Tx.Check asserts both meta pages' headers on a goroutine
// of its own, where the failed assertion ended the process. Check reports
// the damaged page instead (the free list's header too, which it asserts
// as well), and every other check still runs. (The page
// damaged is the older one: with the newer one damaged, bbolt reads the
// state of the commit before.)
func TestCheckReportsADamagedMetaPageWithoutPanicking(t *testing.T) {
	good, _ := damageFixture(t)
	ps := os.Getpagesize()
	txid := func(page int) uint64 { return binary.NativeEndian.Uint64(good[page*ps+16+48:]) }
	old := 0
	if txid(0) > txid(1) {
		old = 1
	}
	at := old * ps
	freelist := int(binary.NativeEndian.Uint64(good[(1-old)*ps+16+32:])) * ps // of the meta page in use
	path := filepath.Join(t.TempDir(), "state.db")
	for name, damage := range map[string]func(b []byte){
		"zeroed":                       func(b []byte) { clear(b[at : at+ps]) },
		"torn":                         func(b []byte) { clear(b[at+40 : at+ps]) },
		"named another page":           func(b []byte) { b[at] ^= 7 },
		"body flipped":                 func(b []byte) { b[at+16+20] ^= 0x40 },
		"checksum flipped":             func(b []byte) { b[at+16+60] ^= 0x01 },
		"free list named another page": func(b []byte) { b[freelist] ^= 0x40 },
	} {
		t.Run(name, func(t *testing.T) {
			bad := append([]byte(nil), good...)
			damage(bad)
			os.WriteFile(path, bad, 0o600)
			rep, err := Check(path, CheckOptions{})
			if err != nil {
				t.Fatalf("check: %v", err)
			}
			if rep.OK || len(rep.Problems) != 1 || rep.Problems[0].Check != CheckBolt || !strings.Contains(rep.Problems[0].Reason, "page") {
				t.Fatalf("check: %+v", rep.Problems)
			}
			if strings.Join(rep.Checks, ",") != "bbolt,records,cross-checks,replay" {
				t.Fatalf("checks run: %v", rep.Checks)
			}
		})
	}
}
