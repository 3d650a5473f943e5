package inspect

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/control"
	"github.com/cdclog/cdclog/recovery"
)

// StreamOptions say how Replay and Rederive write a clean stream.
type StreamOptions struct {
	// Format is the wire format of the records written.
	Format cdc.Format
	// Progress, when not nil, is told how the writing advances: the
	// records written so far and how many are expected in all (0 when
	// that is not known), once before the first record, every
	// ProgressEvery records and once at the end.
	Progress func(done, total int64)
	// Log receives the notes of a stream shorter than the database's
	// output (nothing from the first record asked for on; a WAL that gc
	// cut); nil discards them.
	Log *slog.Logger
}

// ProgressEvery is how many records pass between two calls of
// StreamOptions.Progress.
const ProgressEvery = 4096

// Replay writes r's committed output records from sequence number from
// on (0 is 1, the first) to w, the bytes that ingest --out wrote in the
// same format; a from past the end writes nothing and logs a warning.
// An error writing to w says "write output: ", one reading r "read
// output log: "; when r's process stopped before the first record went
// out, the error is ErrGone (read the file instead, as control.Read
// does). A from below r.OutputStart() is refused by r: the records gc's
// retention dropped are an *recovery.OutputDroppedError.
func Replay(w io.Writer, r control.View, from uint64, o StreamOptions) error {
	from = max(from, 1)
	end := r.OutputEnd()
	if from > end {
		o.log().Warn("nothing to replay: the output log ends before --from-seq", "from_seq", from, "last_record", end-1)
	}
	s := o.start(w, int64(end)-int64(from))
	err := r.Records(from, func(rec *recovery.Record) error { return s.write(&rec.Msg) })
	if s.n == 0 && errors.Is(err, control.ErrGone) {
		return ErrGone
	}
	return s.close(err, "read output log")
}

// Rederive writes the clean stream re-derived from r's WAL alone
// (recovery.Reader.Rederive) to w: the same records as the stored output,
// unless gc dropped the WAL below a floor, where the stream then starts
// (a note in the log says so). Its errors are worded as Replay's, "re-derive
// from the WAL: " for a failure to read or re-derive.
func Rederive(w io.Writer, r *recovery.Reader, o StreamOptions) error {
	total := int64(r.OutputEnd()) - 1 // the same records, when gc dropped nothing
	if floor := r.WALFloor(); floor > 0 {
		o.log().Info("gc dropped the WAL below the floor: the re-derived stream holds nothing before it (empty steps just after it may be missing too)", "wal_floor", floor)
		total = 0
	}
	s := o.start(w, total)
	return s.close(r.Rederive(s.write), "re-derive from the WAL")
}

// VerifyStored re-derives r's stream from its WAL, compares it with the
// stored output (recovery.Reader.Verify) and writes the outcome to w as
// Verify does. The result says whether they match; the error is a failure
// to read ("verify: ...") or to write.
func VerifyStored(w io.Writer, r *recovery.Reader) (recovery.VerifyResult, error) {
	res, err := r.Verify()
	if err != nil {
		return res, fmt.Errorf("verify: %w", err)
	}
	return res, Verify(w, &res, r.WALFloor())
}

func (o *StreamOptions) log() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// start returns the writer of a stream of total records (0 or less: not
// known) to w.
func (o *StreamOptions) start(w io.Writer, total int64) *streamWriter {
	s := &streamWriter{w: cdc.NewWriter(w, o.Format), progress: o.Progress, total: max(total, 0)}
	s.report()
	return s
}

// streamWriter writes a stream of records, counting them for
// StreamOptions.Progress.
type streamWriter struct {
	w        *cdc.Writer
	progress func(done, total int64)
	n, total int64
}

func (s *streamWriter) write(m *cdc.Message) error {
	if err := s.w.Write(m); err != nil {
		return &writeError{err}
	}
	if s.n++; s.n%ProgressEvery == 0 {
		s.report()
	}
	return nil
}

func (s *streamWriter) report() {
	if s.progress != nil {
		s.progress(s.n, s.total)
	}
}

// close flushes the stream; err is the scan's, and what names what was
// read, for its error.
func (s *streamWriter) close(err error, what string) error {
	s.report()
	if err == nil {
		if ferr := s.w.Flush(); ferr != nil {
			err = &writeError{ferr}
		}
	}
	var we *writeError
	if err != nil && !errors.As(err, &we) {
		err = fmt.Errorf("%s: %w", what, err)
	}
	return err
}

// writeError is a failure to write the stream, told apart from one to
// read the database.
type writeError struct{ err error }

func (e *writeError) Error() string { return "write output: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }
