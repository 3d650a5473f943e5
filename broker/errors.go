package broker

import (
	"errors"
	"fmt"
)

// Errors callers tell apart (the command line exits 1 on each).
var (
	// ErrGap: the input's retention deleted messages before they were
	// read: the committed position lies below the log's start.
	ErrGap = errors.New("input messages were deleted before they were read")
	// ErrBackwards: the input went backwards: the committed position
	// lies past the log's end, the log was truncated below what was read,
	// or the topic or stream was deleted and created anew.
	ErrBackwards = errors.New("input went backwards")
	// ErrFenced: another writer took over the output (a newer sink with
	// the same sink id); this one stopped.
	ErrFenced = errors.New("output sink fenced: another writer took over the output")
	// ErrForeignOutput: the last record on the output is not the stored
	// record of the same sequence number: another database or program
	// wrote it, or the read-back is stale. Refused unless Takeover.
	ErrForeignOutput = errors.New("output holds a record this database did not write")
	// ErrOutputAhead: the output holds a record with a sequence number
	// this database has not produced (a database restored from an older
	// copy). Refused unless Takeover.
	ErrOutputAhead = errors.New("output is ahead of this database")
	// ErrOutputConfig: the output topic or stream is set up in a way that
	// cannot hold the output exactly once (a Kafka topic with more than
	// one partition, a missing topic or stream, a JetStream stream that
	// does not acknowledge publishes, a record larger than the topic, the
	// stream or the servers take).
	ErrOutputConfig = errors.New("output is not set up for exactly-once")
)

// PositionError reports a committed input position that the input can no
// longer honour. It wraps ErrGap or ErrBackwards.
type PositionError struct {
	// Input names the input: "kafka:TOPIC/PARTITION" or "nats:STREAM".
	Input string
	// Position is the committed next position (offset or sequence).
	Position int64
	// Start and End are the log's first position and the position after
	// its last, as found (-1 when not known).
	Start, End int64
	// Detail says more, such as "the topic was re-created".
	Detail string
	Err    error
}

func (e *PositionError) Error() string {
	s := fmt.Sprintf("%s: %v: committed position %d", e.Input, e.Err, e.Position)
	if e.Start >= 0 && e.End >= 0 {
		s += fmt.Sprintf(", log holds [%d, %d)", e.Start, e.End)
	}
	if e.Detail != "" {
		s += "; " + e.Detail
	}
	return s + " (rerun with --allow-gap to go on from the log's start)"
}

func (e *PositionError) Unwrap() error { return e.Err }

// fatalError marks a Session error that retrying cannot cure.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// Fatal marks err as one a Forwarder must not retry (a fencing, an
// authorisation failure, a misconfigured output). ErrFenced,
// ErrForeignOutput, ErrOutputAhead and ErrOutputConfig are always fatal.
func Fatal(err error) error {
	if err == nil {
		return nil
	}
	return &fatalError{err}
}

// IsFatal reports whether err was marked Fatal or is one of the fatal
// errors of this package.
func IsFatal(err error) bool {
	var f *fatalError
	return errors.As(err, &f) || errors.Is(err, ErrFenced) || errors.Is(err, ErrForeignOutput) ||
		errors.Is(err, ErrOutputAhead) || errors.Is(err, ErrOutputConfig)
}
