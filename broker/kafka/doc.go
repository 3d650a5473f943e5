// Package kafka reads CDC streams from Kafka topics and writes the clean
// output to one, for cdclog's Processor (see package broker for the
// model, and docs/brokers.md for the settings a cluster needs).
//
// # Source
//
// Source reads every partition of one topic into one database: the
// partitions are assigned directly (no consumer group, no rebalancing),
// read_committed. Its cursor holds the topic's id and, per partition, the
// next offset and the leader epoch of the last record read; Ingest commits
// it with the messages before it. On Start, a topic whose id changed, a
// position below the log's start (retention deleted records never read)
// or past its end (a truncated log) is a *broker.PositionError (ErrGap or
// ErrBackwards) unless AllowGap; while reading, the client's truncation
// detection (leader epochs) and an out-of-range offset stop it the same
// way. Partitions added while it runs are read from their first offset.
// CommitGroup also writes the committed positions to a consumer group,
// for monitoring tools; the source never reads them.
//
// A record value carries one message, or several (see
// broker.DecodeValue); positions print as "kafka:TOPIC/PARTITION" with
// the record's offset.
//
// # Output
//
// Output writes to a topic that must have exactly one partition, with a
// transactional producer whose id is "cdclog-" + the sink id (by
// default the topic). Opening it fences every older producer with that
// id (InitProducerID bumps the epoch and aborts what they left open),
// then reads back the last committed record read_committed. Each
// broker.Forwarder transaction is one Kafka transaction ending at a
// progress record; readers of the topic must use isolation.level
// read_committed. A producer fenced by a newer one stops with
// broker.ErrFenced.
//
// Exactly-once was verified against franz-go's kfake cluster (see the
// integration module), not against Apache Kafka.
package kafka
