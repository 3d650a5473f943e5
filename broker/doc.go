// Package broker connects cdclog to distributed logs: it parses broker
// URLs, reads secrets from the environment, decodes record values, and
// forwards the stored output log to an output with fencing and a verified
// read-back. Packages broker/kafka and broker/jetstream implement the
// sources (recovery.Source) and outputs (Output) for Kafka and NATS
// JetStream; docs/brokers.md is the operator's guide.
//
// # URLs
//
//	kafka://HOST[:PORT][,HOST[:PORT]...]/TOPIC           (port 9092 by default)
//	nats://HOST[:PORT][,HOST[:PORT]...]/STREAM[/SUBJECT] (port 4222 by default)
//
// For a source, SUBJECT filters the stream; for a sink it is the subject
// published to (default: the stream's only subject). URLs never carry
// secrets: a URL with user information is refused, since command lines
// show in process listings. Secrets come from the environment, each
// variable NAME also readable from the file named by NAME_FILE:
//
//	Kafka: CDCLOG_KAFKA_SASL_MECHANISM (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512),
//	       CDCLOG_KAFKA_SASL_USER, CDCLOG_KAFKA_SASL_PASSWORD;
//	       CDCLOG_KAFKA_TLS=1, CDCLOG_KAFKA_TLS_CA, CDCLOG_KAFKA_TLS_CERT,
//	       CDCLOG_KAFKA_TLS_KEY, CDCLOG_KAFKA_TLS_SERVER_NAME (files, PEM)
//	NATS:  CDCLOG_NATS_CREDS (a .creds file), CDCLOG_NATS_NKEY (a seed file),
//	       CDCLOG_NATS_USER, CDCLOG_NATS_PASSWORD, CDCLOG_NATS_TOKEN;
//	       CDCLOG_NATS_TLS=1, CDCLOG_NATS_TLS_CA, CDCLOG_NATS_TLS_CERT,
//	       CDCLOG_NATS_TLS_KEY, CDCLOG_NATS_TLS_SERVER_NAME
//
// # Values
//
// Each Kafka record or JetStream message value carries one CDC message
// in the stream's format (JSON or msgpack), as Materialize and Debezium
// write them; a value may also carry several (JSON lines, or msgpack
// messages one after the other), read in order. Keys and headers of input
// records are ignored. The sink writes exactly one message per record,
// JSON without a line end or msgpack.
//
// # Sources
//
// One receiver per CDC collection: every partition of an input topic
// feeds the one database, since progress statements count updates across
// the whole collection. A source's positions (Kafka: each partition's next
// offset and leader epoch, with the topic's id; JetStream: the next stream
// sequence, with the stream's creation time) are its recovery cursor,
// committed by Processor.Ingest in the same transaction as the messages
// read before them; no broker transaction or consumer group is involved.
// A committed position the log no longer holds stops the source with a
// *PositionError: ErrGap when retention deleted unread messages,
// ErrBackwards when the log is behind what was read or was re-created.
// Re-reading is always harmless (every statement is true forever), so a
// source that is unsure re-reads.
//
// # Sinks
//
// A Forwarder reads the stored output log (Processor.Output) and writes
// it to an Output. Each session first fences older writers of the same
// sink id, then reads back the output's last record S and checks that it
// carries this database's id and is byte-identical to stored record S
// (ErrForeignOutput, or ErrOutputAhead when the database has no record S,
// unless Takeover), then resumes at S+1. Every record carries the headers
// HeaderSeq, HeaderDB and HeaderWriter. So every sequence number reaches
// the output exactly once: a record is written only after the record
// before it was read back or acknowledged, by the one writer the broker
// lets write. A broker error ends a session and a new one starts after a
// back-off; a writer that finds itself fenced, or finds records written by
// another writer since its last session, stops with ErrFenced. Throttle
// applies backpressure to the input when the output lags.
package broker
