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
//	                        ++ chunk size in bytes (4), all BE
//	bucket walseq:  key   = chunk sequence (8 bytes BE)
//	                value = chunk (below)
//
// A chunk is: a version byte (1), uvarint batch, uvarint entry count,
// uvarint first time, uvarint smallest arrival, then per entry: uvarint
// (time - first time), uvarint (arrival - smallest arrival), uvarint
// source, uvarint line, uvarint offset, uvarint body length, body.
//
// The index keys sort by time, then by arrival (chunk sequences grow with
// arrival), so a cursor scan visits chunks in time order. Because a chunk
// is indexed under its last time, Scan(from) finds every entry at or after from by
// seeking to from: any chunk holding such an entry has a last time >= from.
// A chunk whose last time is below t holds only entries below t, which is
// what DeleteBelow removes. The chunks, and the entries in them, are in
// arrival order, so ScanArrival replays the log exactly as it was appended.
//
// Why two buckets: bbolt rewrites the whole leaf a key goes into, values
// included. Chunk bodies are big and their keys only ever grow, so each
// commit rewrites just the last leaf; the index, whose keys do not always
// grow (a late message's chunk lands among older times), has values of 32
// bytes, so landing there rewrites little.
package wal
