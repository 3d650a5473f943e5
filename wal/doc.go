// Package wal is cdclog's write-ahead log: the accepted messages, stored in
// bbolt so that the processor's state can be rebuilt after a crash and the
// clean stream re-derived offline. It knows nothing of the protocol's rules:
// an Entry is an encoded message body filed under a time.
//
// # On-disk format
//
// Entries are appended one batch (one group commit) at a time, cut in
// arrival order into chunks of at most MaxChunkEntries entries or
// MaxChunkBytes bytes; each chunk is stored once, under its sequence number,
// and indexed under its last (largest) time, so a batch costs a few keys
// however many messages it holds. The entries are not sorted by time within
// a chunk: the stream arrives nearly in time order, so a chunk spans a
// short range of times anyway, and sorting each batch cost 15% of ingest's
// CPU.
//
//	bucket wal:     key   = last time in chunk (8 bytes BE) ++ chunk sequence (8 bytes BE)
//	                value = first time (8) ++ last time (8) ++ batch (8) ++ entries (4)
//	                        ++ chunk size in bytes (4) ++ CRC-32C (4), all BE
//	bucket walseq:  key   = chunk sequence (8 bytes BE)
//	                value = chunk (below)
//
// The first time is the smallest Time - Span of the chunk's entries: the
// earliest time any of them speaks about (Entry.Span: a progress
// statement also speaks about the times from its lower bound on), so that
// a reader can tell which chunks may hold something about a range of
// times (ChunkInfo, Log.Chunks, Log.ReadChunk; package recovery's pending
// state). Chunks written before that (schema 2 and earlier) have the
// smallest Time there; package recovery records where the new meaning
// begins.
//
// A chunk (version 3, the one written) is: the version byte 3, a CRC-32C
// (4 bytes BE), uvarint batch, entry count (2 bytes BE), uvarint time and
// uvarint arrival of the first entry, then per entry: uvarint zigzag(time
// - first entry's time), uvarint zigzag(arrival - first entry's arrival),
// uvarint source, uvarint line, uvarint offset, uvarint body length, body.
//
// # Checksums
//
// bbolt checksums its meta pages but not the pages that hold the data, so
// a bit flipped on disk would read back as another entry. As etcd's WAL
// does for each record, every chunk and index record carries a CRC-32C
// (Castagnoli, internal/checksum): a chunk's covers its key (8 bytes) and
// every byte after the checksum; an index record's covers its key (16
// bytes) and its first 32 bytes. Covering the key means a record read
// under another key (a damaged key, an index pointing at another chunk)
// fails too. Every read verifies what it reads: Scan (the replay at open,
// inspect wal) each index record and chunk, and the chunk against its
// index record (size, batch, entry count, each entry's time within the
// record's); ScanArrival (replay --rederive and --verify) each chunk;
// ReadStats and DeleteBelow (a processor's open, inspect status on a file,
// gc) each index record, so gc never deletes a chunk on the word of a
// damaged key. Check, for 'cdclog
// check', reads everything and also pairs every chunk with exactly one
// index record. Damage is a *store.CorruptError naming the bucket and the
// key, wrapping both store.ErrCorrupt and this package's ErrCorrupt. The
// checksum costs 6.3 µs per full chunk (32 KiB, 5 GB/s with the CPU's
// CRC32 instruction: internal/checksum's BenchmarkOf), and in CPU profiles
// 1.5% of BenchmarkBatchWrite (a group commit's WAL work without fsync)
// and 1.6% of recovery's BenchmarkProcessorSubmit/no-db-fsync (the whole
// durable path), measured on a loaded 2-core machine, whose wall-clock
// times were too noisy to compare but whose profile shares hold.
//
// What a checksum cannot show is a record that is not read: a damaged
// index key that now sorts below the time Scan seeks to would hide its
// chunk from Scan. In a leaf page the seek then lands just after that
// record, so Scan also verifies the record before the first one it
// visits. bbolt's own check (key order, in 'cdclog check') and Check's
// pairing of chunks with index records find any other case.
//
// # Older chunks
//
// Versions 1 and 2 were written before checksums (schema 1, see package
// store). Version 2 is version 3 without the checksum; version 1 had a
// uvarint entry count, and its entries' time and arrival offsets counted
// from the chunk's smallest time and arrival, unsigned. Their index records
// are 32 bytes, without the CRC. They are still read, unverified, but only
// below Log.LegacyBelow: the first chunk written after the database was
// upgraded to checksums (package recovery keeps it in the meta bucket).
// From there on a chunk must be of version 3 and an index record 36 bytes,
// so a flipped version byte cannot pass a new chunk off as an old one.
//
// The index keys sort by time, then by arrival (chunk sequences grow with
// arrival), so a cursor scan visits chunks in time order. Because a chunk
// is indexed under its last time, Scan(from) finds every entry at or after from by
// seeking to from: any chunk holding such an entry has a last time >= from.
// A chunk whose last time is below t holds only entries below t, which is
// what DeleteBelow removes. The chunks, and the entries in them, are in
// arrival order, so ScanArrival replays the log exactly as it was appended.
// Version 1 chunks written before that hold a batch sorted by time and cut
// into chunks: ScanArrival sorts each batch of them back into arrival
// order.
//
// Why two buckets: bbolt rewrites the whole leaf a key goes into, values
// included. Chunk bodies are big and their keys only ever grow, so each
// commit rewrites just the last leaf; the index, whose keys do not always
// grow (a late message's chunk lands among older times), has values of 32
// bytes, so landing there rewrites little.
package wal
