// Package store opens the bbolt database that holds a cdclog processor's
// durable state, and names its buckets.
//
// # Layout
//
// A cdclog database is a bbolt file with these top-level buckets:
//
//	meta        "magic" = "cdclog", "schema" = schema version (8 bytes, big-endian),
//	            "created" = RFC 3339 creation time,
//	            "id" = 16 random bytes naming the database (see ID), and in a
//	            database upgraded from schema 1, "checksums_from" (below), and
//	            "spans_from" (schema 3: the first WAL chunk whose index
//	            record starts at its statements' lower bounds; package
//	            recovery)
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
//
// # Files are put in place whole
//
// No process ever sees a database file at its path half written. A new
// database is built under a temporary name in the same directory
// (PATH.cdclog-new-*.tmp): bbolt's first write, then the schema's commit,
// then fsync; it is then linked to PATH, which fails if a file is already
// there (rename would replace a database that another creator may have
// opened and written to), and the directory is fsynced. Replace, which
// gc uses to compact, writes PATH.cdclog-replace-*.tmp the same way and
// renames it over PATH, holding the lock on the file it replaces, then
// fsyncs the directory. A temporary file is locked from its creation;
// Open removes those that are over an hour old and unlocked (a process
// died holding them).
//
// # Recovering a half-created file
//
// Before that rule, cdclog let bbolt create the file at PATH, and a power
// loss during bbolt's first write left a file that bbolt refuses ("Page
// expected to be: 3, but self identifies as 0", "invalid freelist page").
// Open reads the meta pages itself before bbolt does, and takes a file as
// holding no committed state when it is empty; when both meta pages
// validate with transaction ids 0 and 1 (bbolt's first write completed
// and no transaction committed: the first commit writes meta page 0 with
// txid 2); or when it is no longer than that first write and each byte is
// either what bbolt writes there or zero (the write was cut). Such a file
// is treated as absent: a read-write Open replaces it with a new database
// (by Replace's rule, under its lock) and logs why; a read-only or
// NoCreate Open returns ErrNotExist. Anything else is a database that
// committed something, however damaged, and is never replaced: one whose
// meta page says it uses more pages than the file holds (its high-water
// mark) is refused as corrupt before anything reads or writes it, and so
// is one that reads as an empty database only because one meta page is
// damaged (bbolt then reads the other, which in a compacted file is the
// empty state the compaction started from).
//
// # Locks and identity
//
// Open locks the file itself (flock, exclusive to write, shared to read)
// without waiting, retrying until the lock timeout, and after winning the
// lock checks that the locked file is still the one at PATH; if not, it
// opens PATH again. Every process that puts a file at PATH over another
// (gc, or Open replacing a blank file) holds the lock on the file it
// replaces. So a process that holds the lock on the file at PATH has the
// database to itself until it closes: nothing can replace that file
// meanwhile, and a process that was waiting for the lock on a file that
// has since been replaced finds, once it wins the lock, that the file is
// no longer at PATH, and never commits to it. A symbolic link at PATH is
// followed: the file it points to is locked, checked and replaced, and
// the link stays.
//
// # Faults
//
// bbolt reads the file through a memory map. A damaged page, or a file
// cut short while open, or an I/O error, makes bbolt panic or fault; the
// transaction methods turn both into an error wrapping ErrCorrupt. When
// the fault left bbolt's locks held (a write transaction whose rollback
// faulted again), the DB is unusable: every later call fails at once,
// and Close unlocks and closes the file instead of waiting forever in
// bbolt's Close.
//
// # Checksums (schema 2)
//
// bbolt verifies its meta pages, not the pages holding keys and values, so
// one flipped bit in a data page reads back as a different record. Since
// schema 2 every record cdclog reads back carries a CRC-32C (Castagnoli,
// internal/checksum) of its key followed by its value, as etcd's WAL
// frames each record: a record under a damaged key fails as a damaged
// value does. Where it sits:
//
//	walseq      chunk version 3: version byte, CRC (4 bytes BE), rest of the chunk
//	wal         index record: its 32 bytes, then the CRC (4 bytes BE)
//	output      CRC (4 bytes BE), uvarint record count, the records
//	checkpoint  CRC (4 bytes BE), the msgpack checkpoint
//	quarantine  CRC (4 bytes BE), the msgpack record
//	consumers   CRC (4 bytes BE), the next sequence number (8 bytes BE)
//	meta        "checksums_from": CRC (4 bytes BE), three 8-byte BE numbers;
//	            "spans_from": CRC (4 bytes BE), one 8-byte BE number
//
// ("CRC, then payload" is internal/checksum's sealed value.) The meta
// bucket's other records are not checksummed: a flip in "schema" makes it
// 0 (refused) or a large number (newer), or turns 2 into 3, which reads as
// a schema 3 database without "spans_from", that is one whose every WAL
// chunk is taken as written before schema 3 (package recovery reads
// those conservatively); "magic" and "created" are not used for answers. Every read verifies what it reads (opening for
// ingest, inspect, replay, replay --verify and --rederive, gc), and a
// mismatch is a *CorruptError naming the bucket and key and wrapping
// ErrCorrupt; 'cdclog check' reads every record. Package recovery also
// cross-checks the checkpoint against the logs' ends at every open (see
// recovery's crossCheck), which catches what a checksum cannot: records
// that are each intact but disagree.
//
// # Older databases (schema 1)
//
// A schema 1 database (no checksums) is read as it is by read-only opens
// (inspect, replay, check), which verify nothing but the cross-checks. The
// first process to open it for writing (ingest, gc, the recovery API)
// upgrades it in place, in one transaction, and logs that it did: the
// checkpoint and the consumers' positions are rewritten with checksums,
// "schema" becomes 2, and "checksums_from" records where each log's
// checksums begin (the next WAL chunk, output record and quarantine record
// at the upgrade). The logs' earlier records stay as they were, and are
// read unverified; every record from those numbers on must carry a
// checksum that matches, so a damaged version byte cannot pass a new
// record off as an old one. (Rewriting the logs would hold every page of
// a large database in one transaction.) After the upgrade an older cdclog
// refuses the database with ErrNewerSchema. testdata/schema1 holds a
// database written by the schema 1 code, which the tests upgrade.
package store
