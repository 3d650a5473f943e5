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

// ensureID gives a read-write database an id if it has none. It writes
// only when the id is missing, so opening a database that has one costs a
// read transaction.
func (db *DB) ensureID() error {
	var has bool
	if err := db.View(func(tx *bolt.Tx) error { has = ID(tx) != ""; return nil }); err != nil {
		return err
	}
	if has || db.readOnly {
		return nil
	}
	return db.Update(func(tx *bolt.Tx) error { return putID(tx.Bucket(BucketMeta)) })
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
	db.View(func(tx *bolt.Tx) error { id = ID(tx); return nil })
	if err := db.Close(); err != nil {
		return "", fmt.Errorf("close %s: %w", path, err)
	}
	if id == "" {
		return "", fmt.Errorf("%s: database has no id", path)
	}
	return id, nil
}
