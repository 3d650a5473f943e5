package recovery

import (
	"bytes"
	"context"
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
	sink, err := OpenFileSink(out)
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
