package clean

import (
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/streamgen"
)

// ConvertResult counts what Convert did, also when it stopped on an error.
type ConvertResult struct {
	// UpdatesIn and Finishes count the input messages accepted;
	// UpdatesOut the consolidated updates written.
	UpdatesIn, Finishes, UpdatesOut uint64
	// Unfinished counts the updates written at the end without progress,
	// because no finish closed their times: a receiver will never see
	// those times complete. UnfinishedFrom is the first of those times.
	Unfinished     int
	UnfinishedFrom uint64
}

// Convert reads a naive stream from r (updates, and finish messages that
// close every time up to theirs) and writes the CDC stream to w: the
// diffs of each data and time summed and sums of zero dropped, and for
// each finish the finished times' updates, by time then data, and one
// progress statement covering every time since the previous finish (from
// 0 for the first). The updates of times that no finish closes are
// written at the end, without progress, and counted in Unfinished. It
// flushes w before it returns.
//
// It returns at the end of r, or at the first error: a message that
// cannot be decoded (*cdc.DecodeError), one the conversion refuses (a
// progress statement, an update or finish at a time an earlier finish
// closed, a sum of diffs beyond 64 bits: the error names the message, its
// position and the earlier finish), an input that cannot be read, or an
// output that cannot be written (*WriteError). What was converted before
// the error is written.
func Convert(r *cdc.Reader, w *cdc.Writer) (ConvertResult, error) {
	var conv streamgen.Converter
	err := convertAll(&conv, r, w)
	var res ConvertResult
	if err == nil {
		res.Unfinished, res.UnfinishedFrom, err = flushConverter(&conv, w)
	}
	if ferr := w.Flush(); ferr != nil && err == nil {
		err = &WriteError{Err: ferr}
	}
	s := conv.Stats()
	res.UpdatesIn, res.Finishes, res.UpdatesOut = s.UpdatesIn, s.Finishes, s.UpdatesOut
	return res, err
}

// convertAll pushes every message of r through conv, writing what it
// completes, until the end of r or the first error.
func convertAll(conv *streamgen.Converter, r *cdc.Reader, w *cdc.Writer) error {
	for m, err := range r.All() {
		if err != nil {
			return err
		}
		out, err := conv.Push(m, r.Pos())
		if err != nil {
			return err
		}
		if err := writeAll(w, out); err != nil {
			return err
		}
	}
	return nil
}

// flushConverter writes the updates that no finish closed and returns
// how many, and the first of their times.
func flushConverter(conv *streamgen.Converter, w *cdc.Writer) (int, uint64, error) {
	rest, unfinished, err := conv.Flush()
	if err != nil {
		return 0, 0, err
	}
	var from uint64
	if unfinished > 0 {
		from = rest[0].Update.Time
	}
	return unfinished, from, writeAll(w, rest)
}

func writeAll(w *cdc.Writer, msgs []cdc.Message) error {
	for i := range msgs {
		if err := w.Write(&msgs[i]); err != nil {
			return &WriteError{Err: err}
		}
	}
	return nil
}
