package store

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestOpenRefusesSchemaZero: a schema version below the first (a flipped
// bit can make 2 into 0) is damage, not an old database to read
// unverified.
func TestOpenRefusesSchemaZero(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(BucketMeta).Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, 0))
	})
	db.Close()
	for _, ro := range []bool{false, true} {
		if _, err := Open(path, Options{ReadOnly: ro}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("read-only %v: got %v, want ErrCorrupt", ro, err)
		}
	}
}

func TestCorruptErrorNamesBucketAndKeyAndWrapsItsSentinels(t *testing.T) {
	other := errors.New("other")
	for _, tc := range []struct {
		err  CorruptError
		want string
	}{
		{CorruptError{Bucket: "checkpoint", Key: []byte("state"), Reason: "checksum mismatch"},
			`database is corrupt: bucket checkpoint, key "state": checksum mismatch`},
		{CorruptError{Bucket: "output", Key: binary.BigEndian.AppendUint64(nil, 1025), Reason: "r", Err: other},
			"database is corrupt: bucket output, key 0000000000000401 (1025): r"},
		{CorruptError{Bucket: "wal", Key: append(binary.BigEndian.AppendUint64(nil, 7), binary.BigEndian.AppendUint64(nil, 3)...), Reason: "r"},
			"database is corrupt: bucket wal, key 00000000000000070000000000000003 (7, 3): r"},
		{CorruptError{Bucket: "walseq", Reason: "bucket missing"}, "database is corrupt: bucket walseq: bucket missing"},
	} {
		err := error(&tc.err)
		if err.Error() != tc.want {
			t.Errorf("got %q, want %q", err, tc.want)
		}
		if !errors.Is(err, ErrCorrupt) || (tc.err.Err != nil) != errors.Is(err, other) {
			t.Errorf("%v does not wrap its sentinels", err)
		}
	}
}
