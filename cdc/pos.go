package cdc

import (
	"errors"
	"fmt"
	"strings"
)

// Pos is where a message came from. Line is 1-based for JSON Lines and zero
// for binary input; Offset is the byte offset of the message's first byte.
// The zero Pos means "position unknown".
type Pos struct {
	Source string
	Line   int64
	Offset int64
}

// String renders the position as "source:line" for text input and
// "source: byte N" for binary input. A broker's source counts records,
// not bytes: "kafka:TOPIC/PARTITION: offset N" for a Kafka record's
// offset, "nats:STREAM[/SUBJECT]: sequence N" for a JetStream message's
// stream sequence (as cdclog's broker sources name them).
func (p Pos) String() string {
	src := p.Source
	if src == "" {
		src = "input"
	}
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d", src, p.Line)
	}
	unit := "byte"
	switch {
	case strings.HasPrefix(src, "kafka:"):
		unit = "offset"
	case strings.HasPrefix(src, "nats:"):
		unit = "sequence"
	}
	return fmt.Sprintf("%s: %s %d", src, unit, p.Offset)
}

// DecodeError reports a message that could not be decoded: malformed JSON
// or msgpack, an unknown tag, a missing field or a value out of range. Its
// Error names the position and what is wrong.
type DecodeError struct {
	Pos Pos
	// Reason says what is wrong, without the position.
	Reason string
	// Fatal is set when the reader cannot go on past this error (truncated
	// or unframed binary input); otherwise the next call to Next resumes at
	// the following message.
	Fatal bool
	// WrongFormat is set when the message looks like one in the other
	// format (msgpack read as JSON Lines, or JSON Lines read as msgpack),
	// which is then LooksLike; the Reason says so too.
	WrongFormat bool
	LooksLike   Format
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: %s", e.Pos, e.Reason)
}

// IsDecodeError reports whether err is, or wraps, a *DecodeError.
func IsDecodeError(err error) bool {
	var de *DecodeError
	return errors.As(err, &de)
}

// errorf builds a position-less parse error; readers add the position.
func errorf(format string, args ...any) error {
	return &parseError{fmt.Sprintf(format, args...)}
}

type parseError struct{ reason string }

func (e *parseError) Error() string { return e.reason }
