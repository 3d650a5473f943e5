// Package streamgen produces, disturbs and converts example CDC streams:
// the data behind cdclog's gen, mangle and convert commands and behind the
// tests of every consumer of streams. It does no I/O: streams are Go 1.23
// iterators of cdc.Message, and everything is deterministic by seed, with a
// random generator of its own so that a seed names the same stream in every
// Go release.
//
// # Gen
//
// Gen yields an example stream without memory growth; GenOptions.Times
// zero means forever (the consumer decides when to stop). Keys are data
// values: the JSON string "key-<i>" for most keys and the object
// {"id":<i>,"name":"k<i>"} for every fifth one (i = 4, 9, ...), always in
// canonical encoding.
//
// A CDC stream is consolidated and in time order: for each time, every key
// independently changes by a diff drawn from the seed's distribution (no
// update 70% of the time, ±1 20%, ±2 10%), those updates are yielded in key
// order, then a progress statement [t, t+1) with the time's count (no
// counts entry when there is no update). The Mixed shape (the default)
// also, one time in ten, closes 2 to 4 times with one statement [t, t+k)
// listing several counts, and after one statement in sixteen restates the
// last 2 to 8 times in one overlapping statement, which a receiver must
// accept as agreeing with what it already holds.
//
// A naive stream is the seed's: at each step, with probability 1/(Keys+1),
// the current time finishes; otherwise a random key changes by ±1 (or, one
// time in five, ±2) at the current time. A key may change several times
// within one time and the changes may cancel. In the Mixed shape one time
// in ten has no finish of its own, so the next finish closes several times.
// The last time always gets its finish.
//
// With GenOptions.Final a finite stream ends with a statement that nothing
// follows: the progress statement [end, ∞) without counts for CDC, and for
// a naive stream a finish at cdc.MaxTime, which Converter turns into that
// same statement. A receiver then sees every time complete. Without Final
// (the zero value, which the pinned digests in gen_test.go cover) the
// stream just stops after its last time.
//
// # Mangle
//
// Mangle duplicates and reorders any stream (CDC or naive) as an
// at-least-once transport would: every message appears 1 to MaxCopies
// times, each copy held back by at most MaxDelay messages, so memory stays
// bounded by (MaxDelay+1)*MaxCopies held copies.
//
// # Convert
//
// Converter turns a naive stream into a CDC stream: it consolidates per
// (data, time), drops zero sums, and turns each finish into the finished
// times' updates followed by one progress statement covering every time
// since the previous finish. Errors carry the position of the offending
// message. Updates that no finish closes are emitted by Flush, without
// progress, and counted so that the caller can warn.
package streamgen
