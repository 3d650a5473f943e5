// Package cdc holds the types of the change-data-capture protocol that cdclog
// speaks and the codecs that read and write them.
//
// # The protocol
//
// A stream carries two kinds of statements (Frank McSherry's CDC protocol, as
// in differential-dataflow's capture.rs and Materialize's CDCv2):
//
//   - an Update (data, time, diff) says that data changes by exactly diff at
//     time; a producer writes at most one update per (data, time);
//   - a Progress (lower, upper, counts) says, for every time t with
//     lower <= t < upper, how many distinct updates exist at t (the listed
//     count, or zero when t is not listed). An unbounded upper means "to the
//     end of the stream".
//
// Every statement is true forever, so a message may arrive any number of
// times and in any order. A naive stream (input of cdclog convert only) uses
// Finish messages instead of Progress.
//
// # Data
//
// Data is any JSON value, held as its canonical encoding: object keys sorted
// by their UTF-8 bytes, no insignificant white space, strings written with the
// fewest escapes (only '"', '\\' and control characters are escaped), and
// numbers kept exactly as written. Two data values are equal when their
// canonical encodings are equal, so {"a":1,"b":2} equals {"b":2,"a":1}, but 1
// and 1.0 are different data.
//
// Data must also be I-JSON (RFC 7493): duplicate object keys, invalid UTF-8
// and lone surrogate escapes (\ud800) are rejected, not repaired, since
// replacing them with U+FFFD as encoding/json does would make different
// inputs equal data and silently merge updates. Nesting deeper than MaxDepth
// is rejected too. AppendCanonical and IsCanonical expose these rules.
//
// # Formats
//
// JSON Lines (one message per line, a tagged union):
//
//	{"update":{"data":"k","time":7,"diff":1}}
//	{"progress":{"lower":5,"upper":8,"counts":[{"time":7,"count":2}]}}
//
// The decoder also accepts lower and upper as arrays of at most one element
// (the CDCv2 antichain shape, "upper":[] meaning the end of the stream), an
// absent or null upper (also the end), the seed's {"progress":{"time":7,"count":2}}
// (meaning lower 7, upper 8, counts [{7,2}]) and {"finish":{"time":7}}.
// Output is always the primary form above.
//
// Decisions where the contract is silent:
//
//   - A time, count or diff may be written in any JSON form whose value is
//     an exact integer in range: 7, 7.0, 7e0 and 70E-1 are all 7, and -0
//     is 0; 7.5 is an error, never truncated. The same holds for msgpack
//     floats.
//   - "counts": null means no counts, as absent does (Go encoders write nil
//     slices as null). Explicit zero counts are accepted and dropped; the
//     same count given twice for a time is kept once; two different counts
//     for a time are an error. Counts come out sorted by time.
//   - Field order is free, white space is allowed wherever JSON allows it,
//     and keys may be escaped ("d\u0061ta" is "data"). Unknown fields,
//     duplicate fields and more than one tag are errors.
//   - Error columns are 1-based byte offsets into the line.
//   - A message that looks like one in the other format (a msgpack map
//     keyed by a tag read as JSON Lines, or '{"' read as msgpack) gets a
//     DecodeError with WrongFormat and LooksLike set, whose reason says
//     so. JSON Lines read as msgpack is fatal: to msgpack it is a run of
//     small integers, one error per byte, with no telling where a message
//     starts.
//
// ParseJSON has a fast path for the exact compact shapes that AppendJSON
// writes, which allocates nothing for an update whose data is canonical
// (the data then aliases the line); everything else goes through a general
// decoder, and both are fuzzed against each other.
//
// msgpack carries the same maps with the same keys, one message after the
// other with no framing; data is a native msgpack value (maps with string
// keys, arrays, strings, numbers, booleans, nil). JSON numbers written as
// integers that fit an int64 or uint64 travel as msgpack integers, all
// others as float64, read back in their shortest form. So msgpack cannot
// carry every JSON number exactly (7.0 would come back as 7,
// 0.10000000000000000001 as 0.1, and 1e400 as an infinity), and writing
// such a number would merge data that JSON keeps apart, making the output
// contradict itself. AppendMsgpack, and so every msgpack writer, refuses
// such data with ErrMsgpackInexact, naming the message, and the durable
// processor refuses it on input when it writes msgpack; use JSON Lines
// for such data.
//
// The msgpack decoder is written by hand rather than on the msgpack
// library (github.com/vmihailenco/msgpack/v5), for speed:
// BenchmarkMsgpackDecoders decodes a typical update in 41-49 ns, against
// 460-550 ns for a decoder making the same checks on the library's token
// API and 700-830 ns for msgpack.Unmarshal into a struct (a progress
// statement: 78-88 ns, 575-590 ns and 1.25-1.5 µs), so the library would
// have been most of ingest's time. FuzzMsgpackAgainstLibrary decodes the
// same bytes both ways and checks that they accept and refuse alike and
// agree on every message.
//
// The write-ahead log uses a third encoding, AppendBinary and ParseBinary:
// compact msgpack arrays that keep data as its canonical JSON bytes, so it
// is lossless (see binary.go for the layout).
//
// # Reading and writing streams
//
// A Reader decodes a stream and names the source, line (JSON Lines) and
// byte offset of every message it rejects; after a bad JSON line, or a
// well-formed msgpack message of the wrong shape, it goes on with the next
// message. Input that is not msgpack at all, a truncated last msgpack
// message and a msgpack message beyond MaxMessageSize are fatal, since the
// next message's start cannot be found. JSON lines longer than
// MaxMessageSize are reported and skipped. Messages a Reader returns stay
// valid after later calls, so they can be handed to other goroutines.
package cdc
