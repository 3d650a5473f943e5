package broker

import (
	"context"
	"strconv"
)

// The headers every forwarded record carries, so that a read-back (and a
// person) can tell which database wrote it, as which record, and which
// forwarder instance sent it.
const (
	// HeaderSeq is the record's output sequence number, in decimal.
	HeaderSeq = "cdclog-seq"
	// HeaderDB is the id of the database that produced the record (see
	// store.ID).
	HeaderDB = "cdclog-db"
	// HeaderWriter is the id of the forwarder instance that sent it: a
	// random id drawn when the Forwarder is made.
	HeaderWriter = "cdclog-writer"
)

// Outgoing is one record to publish: its sequence number and its encoded
// value. The value is only valid during Session.Write.
type Outgoing struct {
	Seq   uint64
	Value []byte
}

// Stamp says who writes: the database and the forwarder instance. A
// Session puts it in the HeaderDB and HeaderWriter headers.
type Stamp struct {
	DB, Writer string
}

// Last is the last record an output holds, as read back at Open.
type Last struct {
	// Found is false when the output holds no record.
	Found bool
	// Seq is its HeaderSeq; HasSeq is false when it has none (a record
	// that cdclog did not write).
	Seq    uint64
	HasSeq bool
	// DB and Writer are its HeaderDB and HeaderWriter.
	DB, Writer string
	Value      []byte
	// Where names it in messages, such as "orders-clean offset 41".
	Where string
}

// SetHeader fills the field of l that a header names; other headers are
// ignored.
func (l *Last) SetHeader(key string, value []byte) {
	switch key {
	case HeaderSeq:
		if n, err := strconv.ParseUint(string(value), 10, 64); err == nil && n > 0 {
			l.Seq, l.HasSeq = n, true
		}
	case HeaderDB:
		l.DB = string(value)
	case HeaderWriter:
		l.Writer = string(value)
	}
}

// Output is the broker side of a sink: a Kafka topic or a JetStream
// subject that a Forwarder writes to.
type Output interface {
	// Name names the output in messages.
	Name() string
	// Open fences earlier writers of the same sink id, where the broker
	// can, and returns a Session for st and the last record the output
	// holds. A record committed before Open returns is in Last; a writer
	// fenced by Open can commit nothing after it.
	Open(ctx context.Context, st Stamp) (Session, Last, error)
}

// Session writes to an Output after Open.
type Session interface {
	// Write publishes recs in order: as one transaction where the broker
	// has them (Kafka), in atomic batches where it has those (JetStream),
	// else one at a time. On error none of them, or (without
	// transactions) a prefix of them, may be on the output; the Forwarder
	// then opens a new session and reads back where the output stands.
	// An error that retrying cannot cure is marked with Fatal (a fencing
	// wraps ErrFenced).
	Write(ctx context.Context, recs []Outgoing) error
	// Close releases the session.
	Close() error
}
