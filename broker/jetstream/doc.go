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
// A watchdog keeps the source reading when the ordered consumer does not:
// nats.go's ordered consumer can stall for good, with no error, after a
// cluster node dies (it retries re-creating itself under a name whose
// assignment is on the dead node). When nothing was delivered for
// StallTimeout (15 s) while the stream, or the filtered subject, holds a
// message at or past the next sequence, the source starts a new ordered
// consumer after the last message it handed on and retires the old one;
// it logs this at Warn. An idle stream keeps its consumer.
//
// # Output
//
// Output publishes to one literal subject, in nats-server's atomic
// batches (ADR-50, nats-server 2.12 or later, streams with allow_atomic):
// one batch per group of records the broker.Forwarder hands it, split to
// stay within the server's 1,000 messages a batch and a byte bound. Every
// message carries Nats-Msg-Id "<sink-id>:<seq>"; the first of each batch
// carries Nats-Expected-Last-Subject-Sequence, so that the stream stores
// a batch whole only while the subject's last message is the one this
// writer knows, and refuses it whole otherwise (ErrWrongLast). JetStream
// has no producer fencing, so of two live writers the one refused first
// stops (broker.ErrFenced), whichever started last. On a stream without
// allow_atomic, Output publishes one record at a time, each expecting the
// sequence the previous one got, and logs once how to enable batches.
// Open reads back the subject's last message for the broker.Forwarder to
// verify. The Output doc comment gives the exactly-once argument.
package jetstream
