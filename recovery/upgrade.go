package recovery

import (
	"bytes"
	"fmt"
	"log/slog"

	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// upgrade converts an older database to the current schema, in place and
// in one transaction, when a process opens it for writing (Open, GC); a
// read-only open reads it as it is.
//
// From schema 1 (records without checksums) it rewrites the small records
// whole, sealed with their checksums (the checkpoint, the consumers'
// positions), and records in the meta bucket where each log's checksums
// begin (the next WAL chunk, output record and quarantine record):
// rewriting the logs would hold a whole database's pages in one
// transaction, so their records written before stay as they are and are
// read unverified, the records after must carry checksums.
//
// From schema 1 or 2 to 3 (the pending state on disk) it records where
// WAL chunks indexed with their statements' lower bounds begin (the next
// chunk): the chunks before are read knowing that they are not.
//
// The database must pass the cross-checks first: an upgrade does not
// seal damage in. The database can then no longer be opened by a cdclog
// that knows only an older schema, which says so (ErrNewerSchema).
func upgrade(db *store.DB, log *slog.Logger) error {
	var from uint64
	if err := db.View(func(tx *bolt.Tx) error { from = store.Schema(tx); return nil }); err != nil || from >= store.SchemaVersion {
		return err
	}
	err := db.Update(func(tx *bolt.Tx) error {
		from = store.Schema(tx)
		if from >= store.SchemaVersion {
			return nil // another process upgraded it meanwhile
		}
		cp, ok, err := loadCheckpoint(tx)
		if err != nil {
			return err
		}
		if !ok {
			cp = newCheckpoint(0)
		}
		if err := crossCheck(tx, &cp, ok); err != nil {
			return err
		}
		if from < store.ChecksumSchema {
			if err := writeChecksumsFrom(tx, cp.NextChunk, cp.NextOutput, cp.NextQuarantine); err != nil {
				return err
			}
		}
		if err := writeSpansFrom(tx, cp.NextChunk); err != nil {
			return err
		}
		if err := store.SetSchema(tx, store.SchemaVersion); err != nil {
			return err
		}
		if ok {
			if err := cp.put(tx); err != nil {
				return err
			}
		}
		if from < store.ChecksumSchema {
			return sealConsumers(tx)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("upgrade to schema %d: %w", store.SchemaVersion, err)
	}
	if from < store.ChecksumSchema {
		log.Info("upgraded the database to checksums: records written from now on carry a CRC-32C, earlier ones are read as before",
			"db", db.Path(), "schema", store.SchemaVersion)
	} else if from < store.SchemaVersion {
		log.Info("upgraded the database: its pending state is kept on disk from now on",
			"db", db.Path(), "schema", store.SchemaVersion)
	}
	return nil
}

// sealConsumers rewrites every consumer's position with its checksum.
func sealConsumers(tx *bolt.Tx) error {
	b := tx.Bucket(store.BucketConsumers)
	type pos struct {
		name []byte
		next uint64
	}
	var all []pos
	err := b.ForEach(func(k, v []byte) error {
		next, _, err := decodeConsumer(&legacy, k, v)
		all = append(all, pos{bytes.Clone(k), next})
		return err
	})
	if err != nil {
		return err
	}
	for _, p := range all {
		if err := b.Put(p.name, consumerValue(string(p.name), p.next)); err != nil {
			return fmt.Errorf("write consumer %s: %w", p.name, err)
		}
	}
	return nil
}
