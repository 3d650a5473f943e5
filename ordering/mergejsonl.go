package ordering

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/cdclog/cdclog/cdc"
)

// A Shard is one input of MergeJSONL: a shard's records as JSON Lines (see
// JSONLReader for what a line may be) and the name its errors and reports
// give, such as the file name.
type Shard struct {
	Name string
	R    io.Reader
}

// A RejectWriter receives the lines MergeJSONL rejects under policy
// cdc.Quarantine. *cdc.RejectWriter is one; MergeJSONL neither flushes nor
// closes it.
type RejectWriter interface {
	Write(*cdc.Reject) error
}

// MergeOptions says what MergeJSONL does besides merging. The zero value
// stops at the first bad line and reports nothing.
type MergeOptions struct {
	// OnError is what to do with a line that is not a usable record (not a
	// JSON object, a key field missing or malformed, too long): cdc.Fail
	// (the zero value) stops the merge with that line's *LineError;
	// cdc.Skip logs it and goes on; cdc.Quarantine also writes it to
	// Quarantine, which must then be set.
	OnError    cdc.ErrorPolicy
	Quarantine RejectWriter
	// Log receives a warning for each rejected line and for each
	// out-of-order record (a key below its predecessor's in the same
	// shard), up to DisorderReports per shard; nil discards them.
	Log *slog.Logger
	// DisorderReports is how many out-of-order records of each shard are
	// logged one by one; further ones are only counted. Zero means
	// DefaultDisorderReports, a negative value none.
	DisorderReports int
	// Progress, when not nil, is called every ProgressEvery records written
	// with the number written so far, on the goroutine that called
	// MergeJSONL (for a progress display).
	Progress func(written int64)
}

// DefaultDisorderReports is how many out-of-order records of each shard
// MergeJSONL logs when MergeOptions.DisorderReports is zero.
const DefaultDisorderReports = 10

// ProgressEvery is how many records MergeJSONL writes between two calls of
// MergeOptions.Progress.
const ProgressEvery = 4096

// MergeStats counts what MergeJSONL did, also when it stopped on an error.
type MergeStats struct {
	// Shards is the number of inputs.
	Shards int
	// Written is the number of records written to the output (see
	// MergeJSONL for a write error).
	Written int64
	// Skipped and Quarantined count the lines rejected under cdc.Skip and
	// cdc.Quarantine.
	Skipped, Quarantined int64
	// OutOfOrder counts the records whose key is below their predecessor's
	// in the same shard (written after it, all the same).
	OutOfOrder int64
}

// A ReadError reports a shard that could not be read. What was read from
// the shard before it has been merged; the merge stops.
type ReadError struct {
	// Source is the shard's name; Line is the number of its lines read
	// before the failure.
	Source string
	Line   int64
	Err    error
}

// Error returns "reading source after line N: what failed".
func (e *ReadError) Error() string {
	return fmt.Sprintf("reading %s after line %d: %v", e.Source, e.Line, e.Err)
}

// Unwrap returns the read's error.
func (e *ReadError) Unwrap() error { return e.Err }

// A WriteError reports that the merged output, or the quarantine, could
// not be written. The merge stops.
type WriteError struct {
	// Quarantine is set when writing to MergeOptions.Quarantine failed,
	// clear when the output failed.
	Quarantine bool
	Err        error
}

// Error returns "writing output: what failed", or "quarantine: what
// failed" (the RejectWriter's error, which says what it wrote to).
func (e *WriteError) Error() string {
	if e.Quarantine {
		return "quarantine: " + e.Err.Error()
	}
	return "writing output: " + e.Err.Error()
}

// Unwrap returns the write's error.
func (e *WriteError) Unwrap() error { return e.Err }

// MergeJSONL merges JSON Lines shards into one total order and writes every
// record to w, unchanged and exactly once, each followed by a line feed.
// The order is Merge's: by key (see RecordKey), ties by arrival, and each
// shard's own order kept even where the shard is not sorted. A record is
// written only once every shard still being read has a record waiting, or
// has ended.
//
// It first checks opts (see MergeOptions.Validate) and returns their
// *cdc.OptionError before it reads anything. Then it returns when every
// shard is at its end, or at the first error: a bad
// line under cdc.Fail (*LineError), a shard that cannot be read
// (*ReadError), an output or quarantine that cannot be written
// (*WriteError), or ctx's error once it is done. Records merged before the
// error have been written to w; none after it.
//
// Each shard is read on a goroutine of its own, a few chunks ahead of the
// merge (see the package documentation for the memory this takes), and w
// is written on another, one call at a time; Progress and the
// RejectWriter are called on the caller's goroutine. After an error a
// shard's reader may still be inside a Read when MergeJSONL returns: it
// makes no further call once that returns. On a write error, Written
// counts records handed to w that it may not have taken.
func MergeJSONL(ctx context.Context, shards []Shard, w io.Writer, opts MergeOptions) (MergeStats, error) {
	if err := opts.Validate(); err != nil {
		return MergeStats{Shards: len(shards)}, err
	}
	m := newMerge(shards, opts)
	err := m.run(ctx, w)
	return m.stats, err
}

// report applies a merge's policy and keeps its counts: what MergeJSONL
// does with bad lines and out-of-order records, apart from the merging.
type report struct {
	opts   MergeOptions
	log    *slog.Logger
	names  []string
	disord []int64 // out-of-order records per shard
	stats  MergeStats
}

func newReport(shards []Shard, opts MergeOptions) report {
	r := report{opts: opts, log: opts.Log, disord: make([]int64, len(shards)), stats: MergeStats{Shards: len(shards)}}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	for _, s := range shards {
		r.names = append(r.names, s.Name)
	}
	return r
}

// reject applies the policy to one bad line: nil when the merge goes on,
// else the error that stops it.
func (r *report) reject(le *LineError) error {
	if r.opts.OnError == cdc.Fail {
		le.Raw = bytes.Clone(le.Raw) // it pointed into a buffer
		return le
	}
	rj := le.Reject()
	r.log.Warn("rejected input", "error", rj.String())
	if r.opts.OnError != cdc.Quarantine {
		r.stats.Skipped++
		return nil
	}
	if err := r.opts.Quarantine.Write(&rj); err != nil {
		return &WriteError{Quarantine: true, Err: err}
	}
	r.stats.Quarantined++
	return nil
}

// disorder counts the out-of-order record of shard i at line, and logs it
// unless the shard's reports are used up.
func (r *report) disorder(i int, line int64, key Key) {
	r.stats.OutOfOrder++
	r.disord[i]++
	limit := int64(r.opts.DisorderReports)
	if limit == 0 {
		limit = DefaultDisorderReports
	}
	n := r.disord[i]
	if n <= limit {
		r.log.Warn("out-of-order record, kept in its shard's order",
			"at", fmt.Sprintf("%s:%d", r.names[i], line), "key", key.String())
	}
	if n == limit {
		r.log.Warn("further out-of-order records of this shard are only counted", "shard", r.names[i])
	}
}

// written counts one record written, and every ProgressEvery records
// reports progress and checks ctx.
func (r *report) written(ctx context.Context) error {
	r.stats.Written++
	if r.stats.Written%ProgressEvery != 0 {
		return nil
	}
	if r.opts.Progress != nil {
		r.opts.Progress(r.stats.Written)
	}
	return ctx.Err()
}
