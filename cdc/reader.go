package cdc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cdclog/cdclog/internal/slab"
	"io"
)

// MaxMessageSize is the largest message a Reader accepts: a JSON line
// without its line end, or one msgpack message. A longer JSON line is
// reported and skipped (the Reader discards it without holding it whole);
// a longer msgpack message is a fatal error, since the stream cannot be
// resynchronised after it. It also bounds every length inside a msgpack
// message.
const MaxMessageSize = 16 << 20

// chunkSize is how much a Reader reads at a time.
const chunkSize = 256 << 10

// Reader reads messages from a stream in one Format, keeping track of
// where each came from.
//
// Messages returned by Next stay valid forever: their data and counts are
// copied out of the read buffer into blocks that are only ever appended
// to, so the Reader reuses its read buffer and allocates in proportion to
// the data it hands out, not to the bytes it reads. A consumer that keeps a
// few messages for a long time while dropping their neighbours may copy
// Update.Data, so as not to pin whole blocks in memory.
type Reader struct {
	r      io.Reader
	format Format
	source string
	max    int // MaxMessageSize, lowered by tests

	buf        []byte // the current chunk; buf[start:end] is read, not consumed
	start, end int
	scanned    int   // JSONL: buf[start:scanned] has no newline
	eof        bool  // r is exhausted (rerr says why, if not io.EOF)
	rerr       error // r's error other than io.EOF
	empties    int   // consecutive empty reads
	fatal      error // a Fatal DecodeError, returned from then on
	// paused: the last read returned ErrPaused (no input at once).
	paused bool
	// holdUnfinished: see HoldUnfinished.
	holdUnfinished bool
	// discarding: an overlong line is being discarded (a pause came in
	// the middle of it); discardFrom is where it started.
	discarding  bool
	discardFrom int64

	// msgpack: the scan of a message whose end is not yet buffered;
	// scanAt is relative to start, scanPending the values left.
	scanAt, scanPending int

	offset int64 // stream offset of buf[start]
	line   int64 // lines consumed
	began  bool  // past the start of the stream (no BOM to skip)

	pos Pos
	raw []byte
	// head keeps the first RejectHead bytes of a message too long to hold
	// (raw is then nil), for Reject.
	head []byte
	// slab is where data is kept (msgpack data converted to JSON, see
	// mpDecoder; JSON data copied, see keepData), and counts where
	// progress statements' counts are kept (see keepCounts).
	slab   []byte
	counts []Count
}

// NewReader returns a Reader of messages in format f from r; source names
// r in positions (a file name, or "stdin").
func NewReader(r io.Reader, f Format, source string) *Reader {
	return &Reader{r: r, format: f, source: source, max: MaxMessageSize}
}

// ErrPaused is returned by an underlying reader that has no input at once
// but has not reached its end (a pipe whose producer pauses, a file still
// being appended to). The Reader then returns it from Next, having
// consumed nothing of the message it was reading; the next call to Next
// goes on where it stopped. The underlying reader must return it with no
// bytes.
var ErrPaused = errors.New("cdc: no input available yet")

// ErrUnfinished is returned by Next, when HoldUnfinished is set, at the
// end of the input when what remains is an unfinished message.
var ErrUnfinished = errors.New("the input ends in the middle of a message")

// HoldUnfinished makes the Reader leave an unfinished last message
// unconsumed, for an input that another program may still be appending
// to: at the end of the input, a JSON line without its line end whose
// JSON is cut short, or a msgpack message cut short, is not reported
// as an error but left where it is: Next returns ErrUnfinished, with
// Offset and Line before it. (A JSON line without its line end whose JSON
// value is whole, or that cannot start one, is a whole message, or a
// wrong one reported as such: no prefix of a JSON object is one.)
func (r *Reader) HoldUnfinished() { r.holdUnfinished = true }

// Resume sets the counters for a stream that the caller has already
// positioned at byte offset, after line lines. Call it before the first
// Next. A stream resumed past its start is not checked for a BOM.
func (r *Reader) Resume(offset, line int64) {
	r.offset, r.line = offset, line
	r.began = offset > 0
}

// Pos returns the position of the message that Next last returned or
// rejected.
func (r *Reader) Pos() Pos { return r.pos }

// Raw returns the bytes of the message that Next last returned or rejected
// (for JSON Lines without the line end), valid until the next call to
// Next. It is nil after a line too long to hold.
func (r *Reader) Raw() []byte { return r.raw }

// Offset returns the byte offset just past the last message returned or
// rejected (and past any blank lines before it): where to resume. After a
// Fatal error it is the offset of the bad message, where the good input
// ends (a torn tail of a msgpack file starts there).
func (r *Reader) Offset() int64 { return r.offset }

// Line returns the number of lines consumed so far (JSON Lines only).
func (r *Reader) Line() int64 { return r.line }

// Next decodes the next message into *m. It returns io.EOF at the end of
// the stream, an error of the underlying reader as is, or a *DecodeError
// naming the position of a message it cannot decode. After a DecodeError
// that is not Fatal, the next call goes on with the following message; a
// Fatal one is returned again by every later call.
func (r *Reader) Next(m *Message) error {
	if r.fatal != nil {
		return r.fatal
	}
	switch r.format {
	case JSONL:
		return r.nextJSONL(m)
	case Msgpack:
		return r.nextMsgpack(m)
	}
	return fmt.Errorf("cdc: reader for unknown format %v", r.format)
}

// fill reads once into the buffer, first moving the unconsumed bytes to its
// front when it is full (to a bigger buffer when they fill half of it). No
// message refers to the buffer (see keepData), so it is reused.
func (r *Reader) fill() {
	if r.end == len(r.buf) {
		pending := r.end - r.start
		nb := r.buf
		if pending > len(r.buf)/2 || len(r.buf) < chunkSize {
			nb = make([]byte, max(chunkSize, min(2*pending, r.max+2)))
		}
		copy(nb, r.buf[r.start:r.end])
		r.scanned -= r.start
		r.buf, r.start, r.end = nb, 0, pending
	}
	n, err := r.r.Read(r.buf[r.end:])
	r.end += n
	switch {
	case err == ErrPaused:
		r.paused = true
	case err == io.EOF:
		r.eof = true
	case err != nil:
		r.eof, r.rerr = true, err
	case n == 0:
		if r.empties++; r.empties >= 100 {
			r.eof, r.rerr = true, io.ErrNoProgress
		}
	default:
		r.empties = 0
	}
}

// more reads once more, and reports whether the caller may look again:
// false when the underlying reader paused (Next then returns ErrPaused).
func (r *Reader) more() bool {
	r.fill()
	if r.paused {
		r.paused = false
		return false
	}
	return true
}

// consume marks n more bytes as read.
func (r *Reader) consume(n int) {
	r.start += n
	r.offset += int64(n)
	r.scanned = max(r.scanned, r.start)
}

// atEnd returns what Next says when no bytes are left.
func (r *Reader) atEnd() error {
	if r.rerr != nil {
		return r.rerr
	}
	return io.EOF
}

func (r *Reader) decodeError(pos Pos, fatal bool, format string, args ...any) error {
	err := &DecodeError{Pos: pos, Reason: fmt.Sprintf(format, args...), Fatal: fatal}
	if fatal {
		r.fatal = err
	}
	return err
}

// wrongFormat marks err, a *DecodeError from decodeError, as being about a
// message that looks like one in format f, when looks is set.
func (r *Reader) wrongFormat(looks bool, f Format, err error) error {
	if de, ok := err.(*DecodeError); ok && looks {
		de.WrongFormat, de.LooksLike = true, f
		de.Reason += "; it looks like " + f.Name() + ", not " + r.format.Name()
	}
	return err
}

// limit describes the message size limit.
func (r *Reader) limit() string { return limitText(r.max) }

func limitText(max int) string {
	if max%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", max>>20)
	}
	return fmt.Sprintf("%d-byte", max)
}

// LineTooLong is the reason for refusing JSON line number line, longer
// than MaxMessageSize: the one wording of that error, which a Reader gives
// and package ordering's readers give too (cdclog merge), so that a
// quarantine says it the same way whichever command met the line.
func LineTooLong(line int64) string { return lineTooLong(line, limitText(MaxMessageSize)) }

func lineTooLong(line int64, limit string) string {
	return fmt.Sprintf("line %d exceeds the %s message limit", line, limit)
}

// JSON Lines.

var bom = []byte("\xef\xbb\xbf")

func (r *Reader) nextJSONL(m *Message) error {
	if !r.began {
		if err := r.skipBOM(); err != nil {
			return err
		}
	}
	if r.discarding {
		if err := r.discardLine(); err != nil {
			return err
		}
		return r.overlong(r.discardFrom)
	}
	for {
		lineStart := r.offset
		r.head = r.head[:0]
		line, err := r.readLine()
		if err != nil {
			return err
		}
		r.pos = Pos{Source: r.source, Line: r.line, Offset: lineStart}
		if line == nil {
			return r.overlong(lineStart)
		}
		unended := lineStart+int64(len(line)) == r.offset
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if skipWS(line, 0) == len(line) {
			continue // a blank line
		}
		r.raw = line
		if err := parseJSON(line, m, &r.counts); err != nil {
			if unended && r.holdUnfinished && cutShort(line) {
				r.unconsume(r.offset - lineStart)
				return ErrUnfinished
			}
			return r.wrongFormat(looksLikeMsgpack(line), Msgpack, r.decodeError(r.pos, false, "%s", err))
		}
		if m.Kind == KindUpdate {
			m.Update.Data = r.keepData(m.Update.Data)
		}
		return nil
	}
}

// cutShort reports whether line, a JSON line that does not decode, may be
// the start of one still being written: its JSON ends before its first
// value does. A line whose first value is whole (then wrong, or followed
// by more) or that is not JSON is no prefix of a message: no byte added
// after it can make it one.
func cutShort(line []byte) bool {
	var v json.RawMessage
	return json.NewDecoder(bytes.NewReader(line)).Decode(&v) == io.ErrUnexpectedEOF
}

// keepData returns a copy of data in the slab, which is only ever appended
// to: the data stays valid while the read buffer it came from is reused.
func (r *Reader) keepData(data []byte) []byte { return slab.Keep(&r.slab, data, dataSlab) }

// overlong reports the line from offset from, too long to hold, which
// readLine has discarded.
func (r *Reader) overlong(from int64) error {
	r.discarding = false
	r.pos, r.raw = Pos{Source: r.source, Line: r.line, Offset: from}, nil
	return r.wrongFormat(looksLikeMsgpack(r.head), Msgpack,
		r.decodeError(r.pos, false, "%s", lineTooLong(r.line, r.limit())))
}

// unconsume gives back the last n bytes consumed, the line that ends
// them: the input stops before it.
func (r *Reader) unconsume(n int64) {
	r.start -= int(n)
	r.offset -= n
	r.line--
	r.scanned = r.start
}

// skipBOM drops a UTF-8 byte order mark at the start of the stream.
func (r *Reader) skipBOM() error {
	for r.end-r.start < len(bom) && !r.eof && bytes.HasPrefix(bom, r.buf[r.start:r.end]) {
		if !r.more() {
			return ErrPaused
		}
	}
	if bytes.HasPrefix(r.buf[r.start:r.end], bom) {
		r.consume(len(bom))
	}
	r.began = true
	return nil
}

// readLine consumes the next line and returns it without its '\n'. It
// returns a nil line for a line longer than the limit, which it discards.
func (r *Reader) readLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(r.buf[r.scanned:r.end], '\n'); i >= 0 {
			nl := r.scanned + i
			line := r.buf[r.start:nl:nl]
			r.consume(nl + 1 - r.start)
			r.line++
			return r.limitLine(line), nil
		}
		r.scanned = r.end
		if r.end-r.start > r.max+1 {
			r.head = r.head[:0] // discardLine keeps it, however the line was read
			r.discarding, r.discardFrom = true, r.offset
			if err := r.discardLine(); err != nil {
				return nil, err
			}
			return nil, nil
		}
		if r.eof {
			if r.rerr != nil || r.start == r.end {
				return nil, r.atEnd()
			}
			line := r.buf[r.start:r.end:r.end]
			r.consume(r.end - r.start)
			r.line++
			return r.limitLine(line), nil
		}
		if !r.more() {
			return nil, ErrPaused
		}
	}
}

// limitLine returns line, or nil if it is longer than the limit (not
// counting a final '\r').
func (r *Reader) limitLine(line []byte) []byte {
	if len(line) > r.max && (len(line) > r.max+1 || line[len(line)-1] != '\r') {
		r.keepHead(line)
		return nil
	}
	return line
}

// keepHead keeps the first RejectHead bytes of b, the start of a message
// too long to hold.
func (r *Reader) keepHead(b []byte) { r.head = append(r.head[:0], b[:min(len(b), RejectHead)]...) }

// growHead adds the start of b, the next bytes of a line being discarded,
// to the head until it holds RejectHead bytes: the same head, and so the
// same reject and the same guess at the format, whether the line came in
// one read or a byte at a time.
func (r *Reader) growHead(b []byte) {
	if n := RejectHead - len(r.head); n > 0 {
		r.head = append(r.head, b[:min(len(b), n)]...)
	}
}

// discardLine drops the rest of an overlong line, up to and including its
// '\n', without keeping it.
func (r *Reader) discardLine() error {
	for {
		if i := bytes.IndexByte(r.buf[r.start:r.end], '\n'); i >= 0 {
			r.growHead(r.buf[r.start : r.start+i])
			r.consume(i + 1)
			r.line++
			return nil
		}
		r.growHead(r.buf[r.start:r.end])
		r.consume(r.end - r.start)
		if r.eof {
			if r.rerr != nil {
				return r.rerr
			}
			r.line++
			return nil
		}
		if !r.more() {
			return ErrPaused
		}
	}
}

// msgpack.

func (r *Reader) nextMsgpack(m *Message) error {
	r.head = r.head[:0]
	for {
		// Nothing past the limit is looked at, so the outcome does not
		// depend on how much happens to be buffered.
		b := r.buf[r.start:r.end]
		b = b[:min(len(b), r.max)]
		if len(b) > 0 {
			if done, err := r.tryMsgpack(b, m); done {
				return err
			}
		}
		// The message is not wholly buffered yet.
		switch {
		case len(b) == 0 && r.eof:
			return r.atEnd()
		case len(b) >= r.max:
			r.pos, r.raw = r.msgPos(), nil
			r.keepHead(b)
			return r.decodeError(r.pos, true, "msgpack message at byte %d exceeds the %s message limit", r.offset, r.limit())
		case r.eof && r.rerr != nil:
			return r.rerr
		case r.eof && r.holdUnfinished:
			return ErrUnfinished
		case r.eof:
			r.pos, r.raw = r.msgPos(), b
			return r.decodeError(r.pos, true, "truncated msgpack message at byte %d", r.offset)
		}
		if !r.more() {
			return ErrPaused
		}
	}
}

func (r *Reader) msgPos() Pos { return Pos{Source: r.source, Offset: r.offset} }

// tryMsgpack decodes the message at the front of b. It returns done and
// the result of Next, or false when b holds only part of the message.
func (r *Reader) tryMsgpack(b []byte, m *Message) (done bool, err error) {
	var perr error
	if r.scanPending == 0 {
		n, err := parseMsgpack(b, m, &r.slab, &r.counts)
		if err == nil {
			return true, r.acceptMsgpack(b, n, nil)
		}
		// JSON is a run of small integers to msgpack, after which there
		// is no telling where a message starts: stop there.
		switch json, more := looksLikeJSON(b); {
		case json:
			r.pos, r.raw = r.msgPos(), nil
			return true, r.wrongFormat(true, JSONL, r.decodeError(r.pos, true, "%s", err))
		case more && !r.eof:
			return false, nil
		}
		perr = err
		r.scanAt, r.scanPending = 0, 1
	}
	// Find the message's extent, resuming an earlier scan: a message that
	// arrives in many small reads is scanned once, not once per read.
	at, pending, err := mpSkip(b, r.scanAt, r.scanPending)
	r.scanAt, r.scanPending = at, pending
	switch {
	case isTruncated(err):
		return false, nil
	case err != nil: // not msgpack: there is no telling where the next message starts
		r.scanPending = 0
		r.pos, r.raw = r.msgPos(), nil
		return true, r.decodeError(r.pos, true, "%s", err)
	}
	if perr == nil || isTruncated(perr) {
		_, perr = parseMsgpack(b[:at], m, &r.slab, &r.counts)
	}
	return true, r.acceptMsgpack(b, at, perr)
}

// acceptMsgpack consumes the message b[:n], whose decoding gave err.
func (r *Reader) acceptMsgpack(b []byte, n int, err error) error {
	r.scanPending = 0
	r.pos, r.raw = r.msgPos(), b[:n:n]
	r.consume(n)
	if err != nil {
		// A truncation cannot happen here, the extent being complete.
		return r.decodeError(r.pos, isTruncated(err), "%s", err)
	}
	return nil
}

// IsFatal reports whether err is a *DecodeError after which a Reader
// cannot go on.
func IsFatal(err error) bool {
	var de *DecodeError
	return errors.As(err, &de) && de.Fatal
}
