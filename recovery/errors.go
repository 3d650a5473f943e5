package recovery

import (
	"errors"

	"github.com/cdclog/cdclog/store"
)

// Errors callers tell apart.
var (
	// ErrClosed: the processor was closed.
	ErrClosed = errors.New("processor is closed")
	// ErrFailed: a commit or fsync failed and the processor stopped; the
	// error wraps the cause. Reopen the database to recover.
	ErrFailed = errors.New("processor stopped after a storage failure")
	// ErrSinkShort: the output file is shorter than what was committed to
	// it, so it was changed outside cdclog.
	ErrSinkShort = errors.New("output file is shorter than its committed size")
	// ErrSinkForeign: the output file is not empty but this database never
	// wrote to it.
	ErrSinkForeign = errors.New("output file is not empty and was not written by this database")
	// ErrCursorMoved: a request with CursorCheck found its cursor not
	// where it expected (an earlier request of the producer failed).
	ErrCursorMoved = errors.New("not applied: the producer cursor is not where the request expects it (an earlier request failed)")
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

// CorruptError is store.CorruptError, re-exported: a damaged record, with
// the bucket and key it is stored under. Every one wraps ErrCorrupt.
type CorruptError = store.CorruptError
