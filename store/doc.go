// Package store opens the bbolt database that holds a cdclog processor's
// durable state, and names its buckets.
//
// # Layout
//
// A cdclog database is a bbolt file with these top-level buckets:
//
//	meta        "magic" = "cdclog", "schema" = schema version (8 bytes, big-endian),
//	            "created" = RFC 3339 creation time,
//	            "id" = 16 random bytes naming the database (see ID)
//	wal         the write-ahead log's index, by time (package wal)
//	walseq      the write-ahead log's chunks of messages, by arrival (package wal)
//	checkpoint  "state": the processor's checkpoint (package recovery)
//	output      the clean output log, by sequence number (package recovery)
//	quarantine  rejected input kept under --on-error quarantine
//	consumers   named consumers' committed positions
//
// Open refuses a file that is not a bbolt database, a bbolt database that
// is not cdclog's, and a cdclog database of a newer schema, each with its
// own error, and never writes to such a file. A second process gets
// ErrLocked after Options.LockTimeout instead of waiting forever.
package store
