// Package jetstream reads CDC streams from NATS JetStream and writes the
// clean output to it, for cdclog's Processor (see package broker for the
// model, and docs/brokers.md for the settings a cluster needs).
//
// # Source
//
// Source reads one stream (optionally filtered by a subject) by stream
// sequence through an ordered consumer: no durable consumer, no
// acknowledgements. Its cursor holds the stream's creation time and the
// next sequence; Ingest commits it with the messages before it. A stream
// created anew, a sequence below the stream's first (its limits deleted
// messages never read) or past its end is a *broker.PositionError
// (ErrBackwards or ErrGap) unless AllowGap. While reading, a jump in
// sequences is checked against the stream's first sequence (at most once
// a second); a message deleted from the middle of the stream is not
// detected. Positions print as "nats:STREAM" with the stream sequence.
//
// # Output
//
// Output publishes to one literal subject. Every message carries
// Nats-Msg-Id "<sink-id>:<seq>" and Nats-Expected-Last-Subject-Sequence,
// so that the stream refuses a writer that is not up to date; JetStream
// has no producer fencing, so of two live writers the one whose publish is
// refused stops (broker.ErrFenced), whichever started last. Open reads
// back the subject's last message for the broker.Forwarder to verify.
package jetstream
