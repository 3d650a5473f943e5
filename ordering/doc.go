// Package ordering puts records from many shards into one total order, the
// way bloop's RecordBuffer orders DynamoDB stream records, but across whole
// streams rather than one batch at a time. It knows nothing of the CDC
// protocol, of files or of databases; of package cdc it uses only the one
// reject record (cdc.Reject) and the error policy (cdc.ErrorPolicy), so
// that a rejected line reads the same from every command and API.
//
// # The order
//
// A record's Key is its creation time (created_at) and then its sequence
// number. Records with equal keys are ordered by arrival: every buffer and
// merger numbers the records pushed into it with a clock that strictly
// increases and never repeats, so the order (Key, clock) is total.
//
//   - created_at is epoch seconds (integer, fractional or with an exponent,
//     as a JSON number or string) or an RFC 3339 date-time with any offset.
//     It is held exactly as seconds plus nanoseconds, parsed from the
//     digits and never through float64, so 1700000000.25, "1.70000000025e9"
//     and "2023-11-15T00:13:20.25+02:00" are the same instant. Precision
//     beyond the nanosecond is floored, as time.Parse does; instants less
//     than a nanosecond apart are then ordered by sequence number.
//   - the sequence number is a non-negative decimal integer of any length
//     (DynamoDB's run to 40 digits). It is compared as a number: leading
//     zeros dropped, then shorter is smaller, then byte by byte.
//
// # Buffer, Merger and Merge
//
// Buffer is the seed's RecordBuffer: a heap with Push, PushAll (one
// heapify), Pop, Peek, Clear and Len, generic over the record type. It
// orders what it holds and nothing more.
//
// Merger is a k-way merge over shards. Each shard is a FIFO queue and only
// the first record of each shard competes in the heap, so a shard's own
// order is never changed. Next releases a record only when every open shard
// holds at least one, or is closed: then no record yet to arrive can belong
// before it. Merge drives a Merger from one Source per shard, reading a
// shard again only once its previous record has been emitted, so memory is
// one record per shard whatever the size of the input. JSONLReader is a
// Source over JSON Lines, and RecordKey finds a record's key in its JSON.
//
// MergeJSONL is everything `cdclog merge` does, for Go callers: it merges
// JSON Lines shards into one writer, applies an error policy (fail, skip,
// quarantine) to lines without a usable key, logs out-of-order records
// (a few per shard, then only counts them) and returns MergeStats and typed
// errors (*LineError, *ReadError, *WriteError).
//
// # How MergeJSONL is fast
//
// It gives exactly what Merge over JSONLReaders gives (the same records in
// the same order, the same errors, logs and quarantine: the tests hold it
// to that path, kept as their reference), at 11 to 17 times the speed
// (BenchmarkMergeJSONL, scripts/bench-merge):
//
//   - A goroutine per shard reads it in chunks of lines and finds each
//     record's key ahead of the merge, up to four chunks ahead, so shards
//     are parsed in parallel and memory stays bounded: chunks of 256 KiB,
//     smaller beyond four shards so that all of them fit in 4 MiB, down to
//     16 KiB (about 20 MiB of RSS in all up to 64 shards, then about 150
//     KiB a shard). The merge meets each chunk's bad lines and
//     out-of-order records where Merge would, so the policy and the
//     reports are applied in the same order.
//   - No encoding/json on the way: a purpose-built validator (validate.go)
//     walks a record once and notes the key fields as it goes, and what it
//     accepts json.Valid accepts; anything it does not take (invalid JSON,
//     an unusual key) goes to the slow path, which says exactly why.
//   - Shapes (shape.go): a shard's records are nearly always alike, and a
//     record that is the literal text of an earlier one with other scalar
//     values in place of its values is valid JSON, its key fields in the
//     same places. Checking that is a comparison of a few words and a scan
//     of each value, not a walk over every byte.
//   - Keys are read from the bytes without allocating (created_at parsed
//     only when it changes), packed for comparison (mergekey.go), and
//     merged in a loser tree: one comparison per level.
//   - Records are copied as they are into big buffers that another
//     goroutine writes: no allocation per record anywhere.
//
// # Unsorted shards
//
// A shard is expected to be in key order. When it is not, its own order
// still wins: a record whose key is below its predecessor's in the same
// shard leaves after that predecessor, and Merger.Push (or Merge's
// onDisorder) reports it. The output then keeps every shard's order and
// loses nothing, and is non-decreasing in key wherever the shards are.
// Sorting a shard would need the whole shard in memory, and would reorder
// what its producer wrote; reporting it is the honest choice.
//
// # What is better than the seed
//
//   - Order across refills. bloop fills its buffer with a batch from each
//     shard and orders within the buffer, so a record released from one
//     batch can be older than one in the next batch of a shard that was
//     empty at the time. Merger waits for every open shard.
//   - No record lost on close. In bloop's issue #111 (fixed by its pull
//     request #112) the records of a closed shard's last GetRecords batch
//     were dropped from the buffer at once. A closed Merger shard keeps its
//     records until each is released, and is forgotten only then.
//   - Exact comparisons. Python's int() is exact, but Go's obvious ports are
//     not: strconv.ParseUint fails beyond 20 digits, comparing the strings
//     puts "10" before "9", and comparing lengths first puts "009" after
//     "10". created_at is compared across notations without float
//     rounding.
//   - A clock that is simply the next integer, kept across Clear, and no
//     tie left to chance.
package ordering
