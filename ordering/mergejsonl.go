package ordering

import (
	"bufio"
	"context"
	"errors"
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
	// Written is the number of records written to the output.
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

// ErrNoQuarantine is returned by MergeJSONL when the policy is
// cdc.Quarantine and MergeOptions.Quarantine is nil.
var ErrNoQuarantine = errors.New("ordering: policy quarantine needs MergeOptions.Quarantine")

// MergeJSONL merges JSON Lines shards into one total order and writes every
// record to w, unchanged and exactly once, each followed by a line feed.
// The order is Merge's: by key (see RecordKey), ties by arrival, and each
// shard's own order kept even where the shard is not sorted. A record is
// written only once every shard still being read has a record waiting, or
// has ended.
//
// It returns when every shard is at its end, or at the first error: a bad
// line under cdc.Fail (*LineError), a shard that cannot be read
// (*ReadError), an output or quarantine that cannot be written
// (*WriteError), or ctx's error once it is done. Records merged before the
// error have been written to w; none after it.
func MergeJSONL(ctx context.Context, shards []Shard, w io.Writer, opts MergeOptions) (MergeStats, error) {
	if opts.OnError == cdc.Quarantine && opts.Quarantine == nil {
		return MergeStats{Shards: len(shards)}, ErrNoQuarantine
	}
	m := newJSONLMerge(shards, w, opts)
	err := m.run(ctx)
	return m.stats, err
}

// jsonlMerge is one run of MergeJSONL.
type jsonlMerge struct {
	opts    MergeOptions
	log     *slog.Logger
	readers []*JSONLReader
	names   []string
	disord  []int64 // out-of-order records per shard
	out     *bufio.Writer
	stats   MergeStats
}

// outputBufferSize is the size of the output's write buffer.
const outputBufferSize = 256 << 10

func newJSONLMerge(shards []Shard, w io.Writer, opts MergeOptions) *jsonlMerge {
	m := &jsonlMerge{opts: opts, log: opts.Log, out: bufio.NewWriterSize(w, outputBufferSize),
		disord: make([]int64, len(shards)), stats: MergeStats{Shards: len(shards)}}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	for _, s := range shards {
		m.readers = append(m.readers, NewJSONLReader(s.R, s.Name))
		m.names = append(m.names, s.Name)
	}
	return m
}

func (m *jsonlMerge) run(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sources := make([]Source[[]byte], len(m.readers))
	for i, r := range m.readers {
		sources[i] = &policySource{m: m, r: r}
	}
	err := Merge(sources, func(_ int, it Item[[]byte]) error { return m.emit(ctx, it.Record) }, m.onDisorder)
	if ferr := m.out.Flush(); err == nil && ferr != nil {
		err = &WriteError{Err: ferr}
	}
	return err
}

func (m *jsonlMerge) emit(ctx context.Context, rec []byte) error {
	m.out.Write(rec)
	if err := m.out.WriteByte('\n'); err != nil {
		return &WriteError{Err: err}
	}
	m.stats.Written++
	if m.stats.Written%ProgressEvery == 0 {
		if m.opts.Progress != nil {
			m.opts.Progress(m.stats.Written)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// onDisorder is Merge's report of an out-of-order record of shard i.
func (m *jsonlMerge) onDisorder(i int, key Key) {
	m.reportDisorder(i, m.readers[i].Line(), key)
}

// reportDisorder counts the out-of-order record of shard i at line, and
// logs it unless the shard's reports are used up.
func (m *jsonlMerge) reportDisorder(i int, line int64, key Key) {
	m.stats.OutOfOrder++
	m.disord[i]++
	limit := int64(m.opts.DisorderReports)
	if limit == 0 {
		limit = DefaultDisorderReports
	}
	n := m.disord[i]
	if n <= limit {
		m.log.Warn("out-of-order record, kept in its shard's order",
			"at", fmt.Sprintf("%s:%d", m.names[i], line), "key", key.String())
	}
	if n == limit {
		m.log.Warn("further out-of-order records of this shard are only counted", "shard", m.names[i])
	}
}

// reject applies the policy to one bad line: nil when the merge goes on.
func (m *jsonlMerge) reject(le *LineError) error {
	if m.opts.OnError == cdc.Fail {
		return le
	}
	rj := le.Reject()
	m.log.Warn("rejected input", "error", rj.String())
	if m.opts.OnError != cdc.Quarantine {
		m.stats.Skipped++
		return nil
	}
	if err := m.opts.Quarantine.Write(&rj); err != nil {
		return &WriteError{Quarantine: true, Err: err}
	}
	m.stats.Quarantined++
	return nil
}

// policySource is a shard read through a JSONLReader, with the merge's
// policy applied to the lines the reader rejects.
type policySource struct {
	m *jsonlMerge
	r *JSONLReader
}

// Next implements Source.
func (s *policySource) Next() (Key, []byte, error) {
	for {
		k, rec, err := s.r.Next()
		var le *LineError
		if !errors.As(err, &le) {
			return k, rec, err
		}
		if err := s.m.reject(le); err != nil {
			return k, nil, err
		}
	}
}
