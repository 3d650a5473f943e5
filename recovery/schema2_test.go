package recovery

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// schema2Dir holds a database written by cdclog before the pending state
// was kept on disk (testdata/schema2/README.md says how it was made).
const schema2Dir = "../testdata/schema2"

// schema2Committed is how much of clean.jsonl the schema 2 database holds.
const schema2Committed = 51126

func schema2Copy(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(schema2Dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func schema2Messages(t *testing.T, name string) []cdc.Message {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(schema2Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []cdc.Message
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m cdc.Message
		if err := cdc.ParseJSON(line, &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, cloneMessage(&m))
	}
	return msgs
}

// TestASchema2DatabaseReadsAsBefore: a database written before the
// pending state was on disk opens read-only without being changed and
// says what it holds: its frontier, its pending times and updates, its
// output.
func TestASchema2DatabaseReadsAsBefore(t *testing.T) {
	path := schema2Copy(t)
	before, _ := os.ReadFile(path)
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Status()
	if err != nil {
		t.Fatal(err)
	}
	if s.SchemaVersion != 2 || s.Frontier != 311 || s.PendingTimes != 8 || s.PendingUpdates != 20 || s.MemoryHorizon != nil ||
		s.OutputRecords != 895 || s.WAL.Chunks != 10 || s.WAL.Entries != 1068 || s.HeldUpdates != 4 {
		t.Fatalf("status %+v", s)
	}
	pending, err := r.Pending()
	if err != nil || len(pending) != 8 || pending[0].Time != 311 || pending[0].Expected != 6 {
		t.Fatalf("pending %+v, %v", pending, err)
	}
	r.Close()
	want, _ := os.ReadFile(filepath.Join(schema2Dir, "clean.jsonl"))
	if got := storedOutput(t, path); !bytes.Equal(got, want[:schema2Committed]) {
		t.Fatal("the stored output is not the committed prefix of clean.jsonl")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatal("reading changed the file")
	}
}

// TestASchema2DatabaseIsUpgradedAndIngestContinues: opened for writing,
// the schema 2 database is upgraded in place (its WAL chunks are marked as
// indexed the old way), and the stream continues to exactly the clean
// stream of the whole input, with the default pending-memory budget and
// with one so small that nearly everything pending stays on disk, across a
// reopen halfway.
func TestASchema2DatabaseIsUpgradedAndIngestContinues(t *testing.T) {
	more := schema2Messages(t, "more.jsonl")
	clean, _ := os.ReadFile(filepath.Join(schema2Dir, "clean.jsonl"))
	for _, budget := range []int64{0, 300} {
		path := schema2Copy(t)
		out := filepath.Join(filepath.Dir(path), "out.jsonl")
		open := func() *Processor {
			sink, err := OpenFileSink(out, FileSinkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return openTest(t, path, Options{Sink: sink, SinkName: out, SinkFormat: cdc.JSONL, BatchMessages: 64, PendingMemory: budget})
		}
		p := open()
		half := len(more) / 2
		appendAll(t, p, more[:half], 30)
		if st, err := p.Status(); err != nil || budget > 0 && st.MemoryHorizon == nil {
			t.Fatalf("budget %d: status %+v, %v: nothing on disk only", budget, st, err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		p = open()
		appendAll(t, p, more[half:], 30)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, clean) {
			t.Fatalf("budget %d: the output file is not the clean stream of the whole input", budget)
		}
		if got := storedOutput(t, path); !bytes.Equal(got, clean) {
			t.Fatalf("budget %d: the stored output is not the clean stream of the whole input", budget)
		}
		db, err := store.Open(path, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		var l layout
		db.View(func(tx *bolt.Tx) (err error) { l, err = readLayout(tx); return err })
		db.Close()
		if l.schema != store.SchemaVersion || l.spansFrom != 10 || l.wal.LegacyBelow != 0 {
			t.Fatalf("budget %d: layout after the upgrade: %+v", budget, l)
		}
	}
}
