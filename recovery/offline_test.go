package recovery

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/checksum"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

func TestRederiveReproducesTheStoredOutput(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{BatchMessages: 300})
	appendAll(t, p, mangled(21, cleanStream(21, 0, 2000)), 50)
	p.Close()
	r, err := OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var derived []byte
	if err := r.Rederive(func(m *cdc.Message) error { derived = append(cdc.AppendJSON(derived, m), '\n'); return nil }); err != nil {
		t.Fatal(err)
	}
	if string(derived) != string(storedOutput(t, path)) {
		t.Fatal("re-derived stream differs from the stored output")
	}
	res, err := r.Verify()
	if err != nil || !res.Match || res.Compared == 0 {
		t.Fatalf("verify: %+v, %v", res, err)
	}
}

func TestVerifyCatchesADifferenceInTheStoredOutput(t *testing.T) {
	path := dbPath(t)
	p := openTest(t, path, Options{})
	appendAll(t, p, cleanStream(22, 0, 200), 1000)
	p.Close()
	// Tamper with the output log: drop its only chunk and write a chunk
	// with the first record altered.
	var wantDiff uint64
	db, _ := store.Open(path, store.Options{})
	db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(store.BucketOutput)
		k, v := b.Cursor().First()
		var c outputChunk
		c.reset(binary.BigEndian.Uint64(k))
		altered := uint64(0)
		scanChunkForTest(v, func(m cdc.Message) {
			if altered == 0 && m.Kind == cdc.KindUpdate {
				m.Update.Diff = -m.Update.Diff
				altered = c.first + uint64(c.n)
			}
			c.add(&m)
		})
		wantDiff = altered
		return b.Put(k, c.value(k))
	})
	db.Close()
	r, _ := OpenReader(path, 0)
	defer r.Close()
	res, err := r.Verify()
	if err != nil || res.Match || res.FirstDiff != wantDiff || wantDiff == 0 {
		t.Fatalf("verify on tampered output: %+v, %v", res, err)
	}
}

// scanChunkForTest decodes the records of a stored output chunk, skipping
// its checksum.
func scanChunkForTest(v []byte, fn func(cdc.Message)) {
	v = v[checksum.Size:]
	n, w := binary.Uvarint(v)
	v = v[w:]
	for i := uint64(0); i < n; i++ {
		size, w := binary.Uvarint(v)
		var m cdc.Message
		cdc.ParseBinary(v[w:w+int(size)], &m)
		fn(cloneMessage(&m))
		v = v[w+int(size):]
	}
}

func TestGCShrinksTheFileAndIngestContinues(t *testing.T) {
	path := dbPath(t)
	msgs := mangled(23, cleanStream(23, 0, 40000))
	p := openTest(t, path, Options{})
	appendAll(t, p, msgs[:len(msgs)*3/4], 5000)
	p.Close()
	before := storedOutput(t, path)
	res, err := GC(path, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.BytesAfter >= res.BytesBefore/2 || res.ChunksDeleted == 0 {
		t.Fatalf("gc: %+v", res)
	}
	if fi, _ := os.Stat(path); fi.Size() != res.BytesAfter {
		t.Fatalf("file is %d bytes, gc reported %d", fi.Size(), res.BytesAfter)
	}
	if after := storedOutput(t, path); string(after) != string(before) {
		t.Fatal("gc changed the output log")
	}
	p = openTest(t, path, Options{})
	appendAll(t, p, msgs[len(msgs)*3/4:], 5000)
	p.Close()
	if got := storedOutput(t, path); string(got) != string(inMemory(t, msgs)) {
		t.Fatal("output after gc and more ingest differs from an uninterrupted run")
	}
	r, _ := OpenReader(path, 0)
	defer r.Close()
	if v, err := r.Verify(); err != nil || !v.Match {
		t.Fatalf("verify after gc: %+v, %v", v, err)
	}
}

func TestGCOfAMissingDatabaseCreatesNothing(t *testing.T) {
	path := dbPath(t)
	if _, err := GC(path, GCOptions{}); !errors.Is(err, ErrNotExist) {
		t.Fatalf("got %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("gc created a database")
	}
}
