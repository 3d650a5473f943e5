package recovery

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// schema1Dir holds a database written by cdclog before checksums
// (testdata/schema1/README.md says how it was made).
const schema1Dir = "../testdata/schema1"

// schema1Copy copies the schema 1 database into a new directory.
func schema1Copy(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(schema1Dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(schema1Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// schema1Committed is how much of clean.jsonl the schema 1 database holds.
const schema1Committed = 37903

// TestASchema1DatabaseReadsAsBefore: a database written before checksums
// opens read-only without being changed and reads as it did: status,
// output, quarantine, a consumer's position, and a verify that finds the
// stored output identical to the WAL's.
func TestASchema1DatabaseReadsAsBefore(t *testing.T) {
	path := schema1Copy(t)
	before, _ := os.ReadFile(path)
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := r.Status()
	if err != nil {
		t.Fatal(err)
	}
	if s.SchemaVersion != 1 || s.Frontier != 239 || s.OutputRecords != 664 || s.WAL.Chunks != 3 || s.WAL.Entries != 733 || s.Quarantined != 2 {
		t.Fatalf("status %+v", s)
	}
	if got, want := storedOutput(t, path), readTestdata(t, "clean.jsonl")[:schema1Committed]; !bytes.Equal(got, want) {
		t.Fatal("the stored output is not the committed prefix of clean.jsonl")
	}
	var q []QuarantineRecord
	if err := r.Quarantine(func(rec *QuarantineRecord) error { q = append(q, *rec); return nil }); err != nil || len(q) != 2 || q[1].Seq != 2 {
		t.Fatalf("quarantine: %d records, %v", len(q), err)
	}
	if next, ok, err := r.ConsumerPosition("audit"); next != 42 || !ok || err != nil {
		t.Fatalf("consumer audit at %d (%v), %v; want 42", next, ok, err)
	}
	if v, err := r.Verify(); err != nil || !v.Match || v.Compared != 664 {
		t.Fatalf("verify: %+v, %v", v, err)
	}
	r.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatal("reading changed the file")
	}
}

// TestASchema1DatabaseIsUpgradedAndIngestContinues: opened for writing,
// the schema 1 database is upgraded in place: the checkpoint and the
// consumers are sealed, the logs' records written before keep no
// checksum and still read, and everything written after carries one. The
// stream then continues to exactly the clean stream of the whole input.
func TestASchema1DatabaseIsUpgradedAndIngestContinues(t *testing.T) {
	path := schema1Copy(t)
	out := filepath.Join(filepath.Dir(path), "out.jsonl")
	sink, err := OpenFileSink(out, FileSinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := openTest(t, path, Options{Sink: sink, SinkName: out, SinkFormat: cdc.JSONL, BatchMessages: 100})
	var msgs []cdc.Message
	for _, line := range bytes.Split(bytes.TrimSpace(readTestdata(t, "more.jsonl")), []byte("\n")) {
		var m cdc.Message
		if err := cdc.ParseJSON(line, &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, cloneMessage(&m))
	}
	appendAll(t, p, msgs, 50)
	c, err := p.Consumer("audit")
	if err != nil || c.Position() != 42 {
		t.Fatalf("consumer audit at %d after the upgrade, %v; want 42", c.Position(), err)
	}
	if err := c.Commit(context.Background(), 99); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	clean := readTestdata(t, "clean.jsonl")
	if got, _ := os.ReadFile(out); !bytes.Equal(got, clean) {
		t.Fatal("the output file is not the clean stream of the whole input")
	}
	if got := storedOutput(t, path); !bytes.Equal(got, clean) {
		t.Fatal("the stored output is not the clean stream of the whole input")
	}
	db, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var l layout
	db.View(func(tx *bolt.Tx) (err error) { l, err = readLayout(tx); return err })
	db.Close()
	if l.schema != store.SchemaVersion || !l.sealed || l.wal.LegacyBelow != 3 || l.outputFrom != 665 || l.quarantineFrom != 3 {
		t.Fatalf("layout after the upgrade: %+v", l)
	}
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, err := r.Verify(); err != nil || !v.Match || v.Compared != 1152 {
		t.Fatalf("verify: %+v, %v", v, err)
	}
	if next, _, err := r.ConsumerPosition("audit"); next != 100 || err != nil {
		t.Fatalf("consumer audit at %d, %v; want 100", next, err)
	}
}

// TestADamagedChecksumBoundaryIsReported: in an upgraded database, the
// meta record that says where checksums begin is checksummed too; a bit
// flipped in it fails every open with a *CorruptError naming it, rather
// than letting records pass unverified (or old ones fail).
func TestADamagedChecksumBoundaryIsReported(t *testing.T) {
	path := schema1Copy(t)
	if _, err := GC(path, GCOptions{KeepTimes: math.MaxUint64}); err != nil { // upgrades and compacts
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	locs := locate(t, path, func(b, k []byte, _, _ int) bool { return string(b) == "meta" && string(k) == string(checksumsKey) })
	if len(locs) != 1 {
		t.Fatalf("located %d records", len(locs))
	}
	for _, at := range []int{locs[0].at, locs[0].at + 9, locs[0].at + locs[0].size - 1} {
		bad := bytes.Clone(good)
		bad[at] ^= 0x04
		os.WriteFile(path, bad, 0o600)
		_, err := OpenReader(path, 0)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Bucket != "meta" || string(ce.Key) != string(checksumsKey) {
			t.Fatalf("open with byte %d of checksums_from damaged: %v", at-locs[0].at, err)
		}
		if rep, err := Check(path, CheckOptions{}); err != nil || rep.OK || rep.Problems[0].Bucket != "meta" {
			t.Fatalf("check: %+v, %v", rep.Problems, err)
		}
	}
}

// TestAFlippedFrontierInASchema1CheckpointIsCaughtByTheCrossCheck: a
// schema 1 checkpoint has no checksum, but its frontier must be the upper
// bound of the output log's last progress statement: a flipped bit there
// (239 read as 238 or 255) fails every open, ingest included, before
// anything is written, with a *CorruptError naming the checkpoint and
// wrapping ErrInconsistent; check reports it.
func TestAFlippedFrontierInASchema1CheckpointIsCaughtByTheCrossCheck(t *testing.T) {
	path := schema1Copy(t)
	good, _ := os.ReadFile(path)
	at := bytes.Index(good, []byte("\xa8frontier\xcf\x00\x00\x00\x00\x00\x00\x00\xef")) // msgpack: "frontier": uint64 239
	if at < 0 || bytes.Count(good, []byte("\xa8frontier")) != 1 {
		t.Fatal("the checkpoint's frontier is not where expected")
	}
	for _, bit := range []byte{0x01, 0x10} {
		bad := bytes.Clone(good)
		bad[at+17] ^= bit
		os.WriteFile(path, bad, 0o600)
		for name, open := range map[string]func() error{
			"ingest": func() error {
				p, err := Open(path, Options{Logger: quietLogger()})
				if err == nil {
					p.Close()
				}
				return err
			},
			"inspect": func() error {
				r, err := OpenReader(path, 0)
				if err == nil {
					r.Close()
				}
				return err
			},
		} {
			err := open()
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Bucket != "checkpoint" || !errors.Is(err, ErrInconsistent) {
				t.Fatalf("%s with the frontier %d: %v", name, 239^bit, err)
			}
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, bad) {
			t.Fatal("the damaged database was written to")
		}
		if rep, err := Check(path, CheckOptions{}); err != nil || rep.OK {
			t.Fatalf("check: %+v, %v", rep, err)
		}
	}
}
