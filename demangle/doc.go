// Package demangle is the receiver of the CDC protocol: a pure state machine,
// with no I/O, that turns a duplicated and reordered stream of updates and
// progress statements into a clean one.
//
// # Model
//
// A Receiver keeps a frontier F: every time below F is complete and has been
// emitted. It holds the updates at times >= F (one per data and time), the
// coverage of the progress statements it has seen (which times from F on a
// statement speaks for) and the counts they give. A time t >= F is covered
// when every time from F to t lies in some held statement's [lower, upper);
// F advances to the first time that is not covered, or that is covered but
// holds fewer distinct updates than its count.
//
// When F advances, Push emits, in increasing time order, each completed
// time's updates (sorted by data bytes, then diff), then one progress
// statement [old F, new F) with the non-zero counts in between, and forgets
// everything below F. Nothing is emitted for a time before every earlier
// time is complete, so a time is never released early and never dropped.
//
// A statement whose encoding would exceed cdc.MaxMessageSize (one step can
// release any number of times: 700k at once made an 18 MB line) is cut
// into consecutive statements [a, b) [b, c) ..., each after its own times'
// updates, so that cdclog can read its own output; the protocol allows
// re-batched progress. The cut is made where the JSON encoding, never
// smaller than the msgpack one, would pass the limit counting the upper
// bound at 20 digits, so it depends only on what is released: the output
// is the same from run to run and in the durable processor.
//
// Because every statement is true forever, the receiver's state depends only
// on the set of messages pushed, not on their order or multiplicity; the
// output depends only on the order in which they were pushed. Pushing a
// message again is a no-op, which the durable processor relies on to rebuild
// the state after a crash.
//
// # Violations
//
// A message that contradicts what the receiver holds is rejected with a
// *ViolationError naming both messages, and leaves the state unchanged: two
// diffs for one data and time, more distinct updates at a time than its
// count, an update at a time whose count is zero, and two counts for one
// time.
//
// What is not detected, exactly: the receiver holds nothing about times
// below F, so a message is checked only against what it holds about times
// at or above F when it arrives. A contradiction between two messages is
// reported if and only if the time they disagree about is at or above F
// when the later of the two arrives. An update at a time below F is
// dropped as stale unchecked (another diff for a released update, an
// update at a released time of count 0, or one more than its count); a
// statement is checked on its part at or above F only (its counts for
// released times are not compared), and one wholly below F is stale. So
// progress [0,5) then an update at time 1 counts the update as stale,
// while the reverse order reports update-at-zero-count: which of two
// contradicting messages is reported depends on their order, but a
// contradiction never changes the output. The durable processor runs this
// receiver, so cdclog ingest and demangle agree on every input.
//
// This is a decision (issue 12.14): the durable processor could look
// stale messages up in its stored output, but about one message in ten of
// a mangled stream is stale (43,708 of 452,703 in gen --times 100000 |
// mangle) and one point lookup in the output log took 5.5 µs, which would
// add over 40% to ingest's time, and the in-memory receiver, which keeps
// nothing it has emitted, could not do the same. testdata/receiver/released
// pins the behaviour.
//
// # Memory
//
// Memory is proportional to what is pending (updates and statements at or
// above F), never to the length of the stream. The state can be saved with
// MarshalBinary and restored with UnmarshalBinary.
package demangle
