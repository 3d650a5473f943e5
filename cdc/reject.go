package cdc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// RejectHead is how much of a message too long to hold a Reject keeps:
// its first KiB, enough to recognise it.
const RejectHead = 1 << 10

// Reject is input that was refused, whichever command or API met it: a
// message that could not be decoded, or one the receiver refused (a
// protocol violation). It is the one record of a rejected message: written
// to a quarantine file as JSON Lines by RejectWriter, and stored in a
// database's quarantine under policy Quarantine.
type Reject struct {
	// Pos is where the message was.
	Pos Pos
	// Raw is the message as read: a JSON line without its line end, or
	// one msgpack message. A message the receiver refused is given in
	// JSON. For a message too long to hold, Raw is its first RejectHead
	// bytes and Truncated is set.
	Raw       []byte
	Truncated bool
	// Reason says what is wrong, without the position: the text of the
	// error that refused the message, after its position.
	Reason string
	// Index is the reject's place among the decoded messages it came
	// with (a batch, a request): how many of them came before it. The
	// readers that collect rejects set it, and the receivers set rejects
	// aside in that order among the messages they refuse, so that a
	// quarantine keeps the input's order. Zero puts a reject before every
	// message; it means nothing in a stored quarantine record.
	Index int
}

// String renders the reject as its position, then its reason, as the
// refusing error read.
func (r *Reject) String() string { return r.Pos.String() + ": " + r.Reason }

// RejectLine is a Reject as one line of a quarantine file. Raw holds the
// bytes when they are UTF-8, RawBase64 otherwise.
type RejectLine struct {
	Source    string `json:"source"`
	Line      int64  `json:"line,omitempty"`
	Offset    int64  `json:"offset"`
	Reason    string `json:"reason"`
	Raw       string `json:"raw,omitempty"`
	RawBase64 []byte `json:"raw_base64,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// QuarantineLine returns the reject as a line of a quarantine file.
func (r *Reject) QuarantineLine() RejectLine {
	l := RejectLine{Source: r.Pos.Source, Line: r.Pos.Line, Offset: r.Pos.Offset, Reason: r.Reason, Truncated: r.Truncated}
	if utf8.Valid(r.Raw) {
		l.Raw = string(r.Raw)
	} else {
		l.RawBase64 = r.Raw
	}
	return l
}

// Reject returns the Reject for the message that Next last refused with
// de: a copy of its raw bytes (the first RejectHead of a line too long to
// hold), its position and de's reason.
func (r *Reader) Reject(de *DecodeError) Reject {
	rj := Reject{Pos: de.Pos, Reason: de.Reason, Raw: append([]byte(nil), r.raw...)}
	if r.raw == nil && r.head != nil {
		rj.Raw, rj.Truncated = append([]byte(nil), r.head...), true
	}
	return rj
}

// syncer is what RejectWriter needs of a file to make it durable.
type syncer interface{ Sync() error }

// RejectWriter writes Rejects to a quarantine file as JSON Lines, one
// RejectLine per line. Close flushes, and fsyncs when the destination can
// be (an *os.File), so that what was quarantined is on disk when the
// command reports success.
type RejectWriter struct {
	dst   io.Writer
	w     *bufio.Writer
	enc   *json.Encoder
	count uint64
}

// NewRejectWriter returns a RejectWriter on w.
func NewRejectWriter(w io.Writer) *RejectWriter {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &RejectWriter{dst: w, w: bw, enc: enc}
}

// Write appends one reject.
func (rw *RejectWriter) Write(r *Reject) error {
	if err := rw.enc.Encode(r.QuarantineLine()); err != nil {
		return fmt.Errorf("write quarantine: %w", err)
	}
	rw.count++
	return nil
}

// Count returns the number of rejects written.
func (rw *RejectWriter) Count() uint64 { return rw.count }

// Close flushes what is buffered and fsyncs the destination if it has a
// Sync method. It does not close the destination.
func (rw *RejectWriter) Close() error {
	if err := rw.w.Flush(); err != nil {
		return fmt.Errorf("write quarantine: %w", err)
	}
	if s, ok := rw.dst.(syncer); ok {
		if err := s.Sync(); err != nil {
			return fmt.Errorf("fsync quarantine: %w", err)
		}
	}
	return nil
}
