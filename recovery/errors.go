package recovery

import (
	"errors"
	"fmt"

	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/store"
)

// Errors callers tell apart.
var (
	// ErrClosed: the processor was closed.
	ErrClosed = errors.New("processor is closed")
	// ErrFailed: a commit or fsync failed and the processor stopped; the
	// error wraps the cause. Reopen the database to recover.
	ErrFailed = errors.New("processor stopped after a storage failure")
	// ErrLiveOutput: a write to the live stream (Options.Live) failed,
	// such as a pipe whose reader has gone; the processor stopped. It is
	// not a storage failure: what was committed stays, and the next run
	// with a stream writes again what this one may not have.
	ErrLiveOutput = errors.New("writing the output stream failed")
	// ErrSinkShort: the output file is shorter than what was committed to
	// it, so it was changed outside cdclog.
	ErrSinkShort = errors.New("output file is shorter than its committed size")
	// ErrSinkForeign: the output file is not empty but this database never
	// wrote to it.
	ErrSinkForeign = errors.New("output file is not empty and was not written by this database")
	// ErrSinkChanged: the output file's committed bytes are not the ones
	// this database wrote (their checksum differs, or the committed size
	// does not end a record): it was replaced or edited.
	ErrSinkChanged = errors.New("output file's committed bytes are not the ones this database wrote")
	// ErrSinkExcess: the output file holds more than its committed size,
	// and the bytes past it are not what an interrupted run can have left
	// (too many, or not records that continue the stream), so Open does
	// not cut them.
	ErrSinkExcess = errors.New("output file holds bytes past its committed size that this database did not write")
	// ErrSinkLocked: another process holds the output file's lock.
	ErrSinkLocked = errors.New("output file is locked by another process")
	// ErrSinkStream: the output path is not a regular file but a stream
	// (a pipe, a device, a file descriptor such as /dev/stdout), which is
	// never cut: write to it as Options.Live.
	ErrSinkStream = errors.New("output path is a stream, not a regular file")
	// ErrCursorMoved: a request with CursorCheck found its cursor not
	// where it expected (an earlier request of the producer failed).
	ErrCursorMoved = errors.New("not applied: the producer cursor is not where the request expects it (an earlier request failed)")
	// ErrInvalidData: an update given to Append or Submit has data that is
	// not valid JSON (or not I-JSON: see cdc.AppendCanonical). It wraps
	// demangle.ErrInvalid. The request was refused whole.
	ErrInvalidData = fmt.Errorf("%w: update data is not valid JSON", demangle.ErrInvalid)
	// ErrConsumerBusy: a Consumer of that name is already open; close it
	// first.
	ErrConsumerBusy = errors.New("consumer is already open")
	// ErrCommitRange: Consumer.Commit was given 0 or a sequence number
	// past the committed output, or Consumer.Seek a position outside the
	// records the output log holds.
	ErrCommitRange = errors.New("not a committed output record")
	// ErrConsumerNotFound: DeleteConsumer was given a name that no
	// consumer has.
	ErrConsumerNotFound = errors.New("no such consumer")
	// ErrOutputDropped: the output records asked for were dropped by gc's
	// retention (see Retention); the error is an *OutputDroppedError,
	// which says where the output log now starts.
	ErrOutputDropped = errors.New("output records were dropped by gc")
	// ErrCommitBackwards: Consumer.Commit was given a record before the
	// one the consumer last committed.
	ErrCommitBackwards = errors.New("consumer position cannot go backwards")
	// ErrStartMismatch: Options.Start differs from the start the database
	// was created with (the error is a *StartError, which says both).
	ErrStartMismatch = errors.New("start differs from the database's")
	// ErrInconsistent: the write-ahead log and the checkpoint disagree
	// (the database was damaged or edited).
	ErrInconsistent = errors.New("write-ahead log and checkpoint disagree")

	// Re-exported from package store so callers need only this package.
	ErrLocked      = store.ErrLocked
	ErrForeign     = store.ErrForeign
	ErrCorrupt     = store.ErrCorrupt
	ErrNewerSchema = store.ErrNewerSchema
	ErrNotExist    = store.ErrNotExist
)

// OutputDroppedError says that the output records from From on cannot
// be read whole: gc's retention dropped those before First, the first
// record the output log holds. It wraps ErrOutputDropped.
type OutputDroppedError struct {
	From, First uint64
}

func (e *OutputDroppedError) Error() string {
	return fmt.Sprintf("%v: record %d is gone, the output log holds the records from %d on", ErrOutputDropped, e.From, e.First)
}

// Unwrap returns ErrOutputDropped.
func (e *OutputDroppedError) Unwrap() error { return ErrOutputDropped }

// CorruptError is store.CorruptError, re-exported: a damaged record, with
// the bucket and key it is stored under. Every one wraps ErrCorrupt.
type CorruptError = store.CorruptError

// changedOutside reports whether err is FileSink.Write's refusal of an
// output file that another program changed while it was open: reopening
// the database would refuse the file too.
func changedOutside(err error) bool {
	return errors.Is(err, ErrSinkExcess) || errors.Is(err, ErrSinkShort) || errors.Is(err, ErrSinkChanged)
}
