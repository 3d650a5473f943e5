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
// msgpack carries the same maps with the same keys, one message after the
// other with no framing; data is a native msgpack value (maps with string
// keys, arrays, strings, numbers, booleans, nil).
package cdc
