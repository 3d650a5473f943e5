package input

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// Stream is a recovery.Source over an input that cannot be read again:
// stdin, a pipe, a device. It has no name, so nothing of it is resumed:
// each Ingest reads it from where it stands.
type Stream struct {
	label  string
	in     *feeder
	dec    *cdc.Reader
	closer io.Closer
	log    *slog.Logger
	ended  error // what ended the input, returned from then on
}

// NewStream returns a source reading r, in format f; label names it in
// positions and errors ("stdin", a path). Nothing is read from r before
// the stream's first Read. Close closes r when it is an io.Closer. log
// may be nil (slog's default).
func NewStream(r io.Reader, f cdc.Format, label string, log *slog.Logger) *Stream {
	if log == nil {
		log = slog.Default()
	}
	in := newFeeder(r)
	s := &Stream{label: label, in: in, dec: cdc.NewReader(in, f, label), log: log}
	if c, ok := r.(io.Closer); ok {
		s.closer = c
	}
	return s
}

// Name is empty: a stream cannot be resumed.
func (s *Stream) Name() string { return "" }

// Label names the stream in positions.
func (s *Stream) Label() string { return s.label }

// Offset returns how many bytes of the stream have been consumed.
func (s *Stream) Offset() int64 { return s.dec.Offset() }

// Start does nothing: a stream is read from where it stands.
func (s *Stream) Start(context.Context, []byte) error { return nil }

// Read fills b with what the stream has, returning as soon as b holds
// something and nothing more is available at once. When ctx ends it
// hands over, over as many calls as it takes, every byte it has already
// taken from the stream, then returns ctx's error.
func (s *Stream) Read(ctx context.Context, b *recovery.SourceBatch) error {
	if s.ended != nil {
		return s.ended
	}
	for {
		if ctx.Err() != nil && !s.in.done {
			s.in.stop()
			s.dec.HoldUnfinished()
		}
		err := fill(s.dec, b)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, cdc.ErrPaused):
			if b.Len() > 0 {
				return nil
			}
			if werr := s.in.wait(ctx); werr != nil {
				continue // stopped: drain what was read
			}
		default:
			return s.end(ctx, err)
		}
	}
}

// end records what ended the input: once stopped, ctx's error, after a
// note about a message left half read.
func (s *Stream) end(ctx context.Context, err error) error {
	if s.in.done {
		if errors.Is(err, cdc.ErrUnfinished) {
			s.log.Warn("stopped in the middle of a message: its bytes read so far are not ingested",
				"input", s.label, "offset", s.dec.Offset())
		}
		if err == io.EOF || errors.Is(err, cdc.ErrUnfinished) {
			err = ctx.Err()
		}
	}
	s.ended = err
	return err
}

// Close stops reading and closes the underlying reader if it is a Closer.
func (s *Stream) Close() error {
	s.in.stop()
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}
