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
// on the set of messages pushed, not on their order or multiplicity (when
// some contradict others, on which came first: see Violations); the output
// depends only on the order in which they were pushed. Pushing a message
// again is a no-op, which the durable processor relies on to rebuild the
// state after a crash.
//
// # Violations
//
// A message that contradicts what the receiver holds is reported with a
// *ViolationError naming both messages: two diffs for one data and time,
// more distinct updates at a time than its count, an update at a time
// whose count is zero, and two counts for one time. A progress statement
// is a set of claims, one per time it covers ("t holds c distinct
// updates", c = 0 when t is not listed), and each claim is judged on its
// own: a claim that contradicts what is held about its time is rejected,
// the statement's other claims are held, and Push returns the violation
// (for the smallest such time) with Outcome Accepted; a message with
// nothing else to say is rejected whole and leaves the state unchanged.
// What the receiver holds about a time therefore depends only on the
// messages about that time, in the order they arrived: the first of two
// contradicting messages wins. (Until the horizon below, a statement with
// one contradicting claim was rejected whole; judging claims one by one is
// what lets the receiver judge a statement's claims about times beyond
// its horizon later, with the same outcome whatever the horizon.)
//
// What is not detected, exactly: the receiver holds nothing about times
// below F, so a message is checked only against what it holds about times
// at or above F when it is judged. A contradiction between two messages is
// reported if and only if the time they disagree about is at or above F
// when the later of the two is judged. An update at a time below F is
// dropped as stale unchecked (another diff for a released update, an
// update at a released time of count 0, or one more than its count); a
// statement is checked on its part at or above F only (its counts for
// released times are not compared), and one wholly below F is stale. So
// progress [0,5) then an update at time 1 counts the update as stale,
// while the reverse order reports update-at-zero-count: which of two
// contradicting messages is reported depends on their order. The durable
// processor runs this receiver, so cdclog ingest and demangle agree on
// every input.
//
// This is a decision (issue 12.14): the durable processor could look
// stale messages up in its stored output, but about one message in ten of
// a mangled stream is stale (43,708 of 452,703 in gen --times 100000 |
// mangle) and one point lookup in the output log took 5.5 µs, which would
// add over 40% to ingest's time, and the in-memory receiver, which keeps
// nothing it has emitted, could not do the same. testdata/receiver/released
// pins the behaviour.
//
// # Memory and the horizon
//
// Without a store, memory is proportional to what is pending (updates and
// statements at or above F), never to the length of the stream; the state
// can be saved with MarshalBinary and restored with UnmarshalBinary.
//
// With a Store (UseStore) the receiver keeps in memory only the times from
// F up to a horizon H, within a budget (DefaultBudget: 32 MiB as it
// counts held state). Until what it holds passes the budget there is no
// horizon. Past it, NeedShed says so and its owner calls Shed, between
// pushes: H moves down until what is held takes half the budget (never
// below F+1: the frontier's own time stays in memory, however big), and
// what was held beyond H goes to the store. From then on a message about
// a time at or beyond H is accepted unjudged and handed to the store (an
// update, or a statement's claims from H on), and as the frontier moves,
// windows of times are taken back from the store into memory, so that F
// always finds its time in memory and memory holds about half the budget;
// once the store is empty there is no horizon again. MemStore keeps the
// store in memory, compactly (cdclog demangle); the durable processor
// keeps it on disk, in its write-ahead log (package recovery).
//
// Where H stands changes when a message about a time beyond it is judged,
// never what becomes of it: messages taken back are judged in the order
// they were accepted (Held.Seq), each time's claims and updates as if
// they had been pushed then, so the output is byte for byte the same for
// any budget, any store and any crash and restart of the durable
// processor (TestAStoreAndAnyBudgetGiveTheSameOutput). What differs is
// when a violation by such a message is found: when its time is taken
// back, not when it arrived. It was accepted then (and counted as
// accepted, and the durable processor logged it); it is then dropped, as
// a rejected message is, and reported by Deferred, marked
// ViolationError.Deferred, and counted as a violation instead. Likewise a
// duplicate beyond the horizon is accepted, and counted as a duplicate
// when taken back. testdata/receiver/horizon shows both.
package demangle
