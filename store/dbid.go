package store

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// idKey is the meta key holding the database's id: 16 random bytes,
// written once (at creation, or at the first read-write open of a
// database made before ids existed) and never changed. It is not part of
// the schema version: a build that does not know it ignores it.
var idKey = []byte("id")

// ID returns the database's id in hex (32 characters), or "" when it has
// none yet (a database made before ids existed, opened read-only). Two
// databases never share an id, except a file copied whole; a broker sink
// stamps every record it forwards with it, so that a read-back can tell
// this database's records from another's.
func ID(tx *bolt.Tx) string {
	if meta := tx.Bucket(BucketMeta); meta != nil {
		if v := meta.Get(idKey); len(v) > 0 {
			return hex.EncodeToString(v)
		}
	}
	return ""
}

// EnsureID gives the database an id, in tx, if it has none: a database
// made before ids existed gets one at its first read-write use. Callers
// run it once the database has passed their own checks (recovery.Open
// does, in the transaction of its first checkpoint), so that a damaged
// database is never written to.
func EnsureID(tx *bolt.Tx) error {
	meta := tx.Bucket(BucketMeta)
	if meta == nil {
		return fmt.Errorf("%w: meta bucket missing", ErrCorrupt)
	}
	return putID(meta)
}

// putID writes a new random id into meta unless it holds one. create
// calls it, so a new database has its id from its first commit.
func putID(meta *bolt.Bucket) error {
	if meta.Get(idKey) != nil {
		return nil
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return fmt.Errorf("database id: %w", err)
	}
	if err := meta.Put(idKey, id); err != nil {
		return fmt.Errorf("write database id: %w", err)
	}
	return nil
}

// ReadID opens the database at path read-write (creating it if needed),
// gives it an id if it has none, and returns the id. Use it before the
// database is opened for good (recovery.Open holds the lock until Close).
func ReadID(path string, o Options) (string, error) {
	o.ReadOnly = false
	db, err := Open(path, o)
	if err != nil {
		return "", err
	}
	var id string
	err = db.Update(func(tx *bolt.Tx) error {
		if err := EnsureID(tx); err != nil {
			return err
		}
		id = ID(tx)
		return nil
	})
	if err != nil {
		db.Close()
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if err := db.Close(); err != nil {
		return "", fmt.Errorf("close %s: %w", path, err)
	}
	if id == "" {
		return "", fmt.Errorf("%s: database has no id", path)
	}
	return id, nil
}
