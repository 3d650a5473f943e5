package cdc

import (
	"fmt"
	"io"
)

// AppendMessage appends m in format f: JSON Lines (AppendJSON and a '\n')
// or msgpack (AppendMsgpack, which refuses data it cannot carry exactly,
// leaving dst unchanged; JSON Lines never fails).
func AppendMessage(dst []byte, f Format, m *Message) ([]byte, error) {
	if f == Msgpack {
		return AppendMsgpack(dst, m)
	}
	return append(AppendJSON(dst, m), '\n'), nil
}

// writerBufferSize is how much a Writer buffers before writing.
const writerBufferSize = 64 << 10

// Writer writes messages to a stream in one Format, buffered. After a write
// error every later call returns that error; a message its format cannot
// carry (see AppendMsgpack) is refused with an error and not written, and
// the Writer stays usable.
type Writer struct {
	w      io.Writer
	format Format
	buf    []byte
	err    error
}

// NewWriter returns a Writer of messages in format f to w.
func NewWriter(w io.Writer, f Format) *Writer {
	return &Writer{w: w, format: f, buf: make([]byte, 0, writerBufferSize)}
}

// Write buffers m, writing the buffer out when it is full. m is encoded at
// once, so the caller may reuse it.
func (w *Writer) Write(m *Message) error {
	if w.err != nil {
		return w.err
	}
	if w.format != JSONL && w.format != Msgpack {
		return fmt.Errorf("cdc: writer for unknown format %v", w.format)
	}
	var err error
	if w.buf, err = AppendMessage(w.buf, w.format, m); err != nil {
		return err
	}
	if len(w.buf) >= writerBufferSize {
		return w.Flush()
	}
	return nil
}

// Flush writes out whatever is buffered.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.w.Write(w.buf)
	if err == nil && n < len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
		return err
	}
	w.buf = w.buf[:0]
	return nil
}

// Buffered returns how many bytes are waiting for Flush.
func (w *Writer) Buffered() int { return len(w.buf) }
