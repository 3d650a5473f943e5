package ordering

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/cdclog/cdclog/cdc"
)

// A KeyError reports an ordering key that is missing or malformed: which
// field, the offending text and what is wrong with it. Its Error reads like
//
//	meta.sequence_number "12x" is not a decimal integer
//
// Callers that read records from files add the position (see LineError).
type KeyError struct {
	// Field names the value, e.g. "meta.created_at" or "sequence number".
	Field string
	// Text is the offending value as written (JSON text for a record's
	// field, a quoted string otherwise), shortened to a readable length;
	// empty when the value is missing.
	Text string
	// Reason says what is wrong, e.g. "is not a decimal integer".
	Reason string
}

// Error returns "field text reason", e.g. `meta.created_at "x" is neither
// epoch seconds nor an RFC 3339 date-time`.
func (e *KeyError) Error() string {
	switch {
	case e.Field == "":
		return e.Reason
	case e.Text == "":
		return e.Field + " " + e.Reason
	}
	return e.Field + " " + e.Text + " " + e.Reason
}

// maxErrorText is how much of an offending value an error message quotes.
const maxErrorText = 64

// shorten cuts s to maxErrorText bytes (on a rune boundary) and marks the cut.
func shorten(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// quoted renders a Go string for a KeyError's Text.
func quoted(s string) string {
	return shorten(fmt.Sprintf("%q", s))
}

// A LineError reports a line of a JSON Lines source that is not a usable
// record: its key is missing or malformed (Err is then a *KeyError), the
// line is not a JSON object, or it is longer than the reader's limit (Err
// is then ErrLineTooLong). The reader can go on past a LineError: the next
// call to Next reads the following line.
type LineError struct {
	// Source names the input (a file name) and Line is the 1-based line;
	// Offset is the byte offset of the line's first byte in the input.
	Source string
	Line   int64
	Offset int64
	// Raw is the offending line without its terminator, or its first
	// bytes when the line is too long. It is valid until the reader's next
	// call to Next.
	Raw []byte
	// Err says what is wrong.
	Err error
}

// Error returns "source:line: what is wrong".
func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.Source, e.Line, e.Err)
}

// Unwrap returns Err, so errors.As finds a *KeyError and errors.Is finds
// ErrLineTooLong.
func (e *LineError) Unwrap() error { return e.Err }

// Reject returns the line as the one reject record of cdclog: its
// position, a copy of its bytes (the first of them, Truncated set, for a
// line too long) and what is wrong with it.
func (e *LineError) Reject() cdc.Reject {
	return cdc.Reject{Pos: cdc.Pos{Source: e.Source, Line: e.Line, Offset: e.Offset}, Raw: bytes.Clone(e.Raw),
		Truncated: errors.Is(e.Err, ErrLineTooLong), Reason: e.Err.Error()}
}

// ErrLineTooLong is wrapped by the LineError of a line longer than a
// JSONLReader's limit.
var ErrLineTooLong = errors.New("line is too long")

// lineTooLong is the error of line number line, longer than MaxLineSize.
// It reads as cdc.Reader words the same error (cdc.LineTooLong), so that
// merge's rejects and those of the other commands say it one way, and it
// matches ErrLineTooLong.
func lineTooLong(line int64) error { return &tooLongError{line} }

type tooLongError struct{ line int64 }

func (e *tooLongError) Error() string        { return cdc.LineTooLong(e.line) }
func (e *tooLongError) Is(target error) bool { return target == ErrLineTooLong }

// Errors of a Merger used out of its protocol. They come wrapped with the
// shard's id; test with errors.Is.
var (
	// ErrUnknownShard: Push or Close named a shard that was never added,
	// or one already closed and drained.
	ErrUnknownShard = errors.New("unknown shard")
	// ErrShardExists: Add named a shard the merger still holds.
	ErrShardExists = errors.New("shard already added")
	// ErrShardClosed: Push named a shard that was closed.
	ErrShardClosed = errors.New("shard is closed")
)
