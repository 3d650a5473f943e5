package cdc

import (
	"errors"
	"io"
	"iter"
)

// All returns an iterator over the messages of r from where it stands: it
// yields each message with a nil error until the end of the stream
// (io.EOF, which it does not yield), or until Next's first error, which it
// yields with a zero Message as the last pair, even a DecodeError that is
// not Fatal (a caller that goes past bad messages calls Next). A loop that
// stops early leaves the rest unread. The messages stay valid, as Next's.
func (r *Reader) All() iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		for {
			var m Message
			err := r.Next(&m)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(Message{}, err)
				return
			}
			if !yield(m, nil) {
				return
			}
		}
	}
}

// Messages is All without the errors, for code that takes an
// iter.Seq[Message]: it yields the messages until the end of the stream
// or the first error, which it leaves in *errp (untouched at the end).
func (r *Reader) Messages(errp *error) iter.Seq[Message] {
	return func(yield func(Message) bool) {
		for m, err := range r.All() {
			if err != nil {
				*errp = err
				return
			}
			if !yield(m) {
				return
			}
		}
	}
}

// WriteAll writes every message of seq to w, stopping at the first error
// of Write, and returns how many it wrote. It does not Flush w.
func (w *Writer) WriteAll(seq iter.Seq[Message]) (uint64, error) {
	var n uint64
	for m := range seq {
		if err := w.Write(&m); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
