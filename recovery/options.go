package recovery

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// Default group-commit limits.
const (
	DefaultBatchMessages = 32 << 10
	DefaultBatchBytes    = 2 << 20
	DefaultBatchDelay    = 2 * time.Millisecond
)

// Options configure a Processor. The zero value works: no output file,
// frontier from 0, policy Fail, default batching, slog's default logger.
type Options struct {
	// BatchMessages closes a group commit once it holds this many messages,
	// BatchBytes once their data takes this many bytes (about: an update
	// counts its data and 8 bytes, a statement 16 a count), so that a
	// batch's buffers (its WAL chunks, output records and output bytes,
	// three batches in flight) stay small when messages are big. The
	// default, 2 MiB, never cuts a batch of 32K ordinary messages (about
	// 1 MB); with 10 KB objects it gave the lowest memory and time of 2 and
	// 8 MiB (peak RSS 320 and 530 MB, 8.5 and 10.5 s for 200k messages).
	BatchMessages int
	BatchBytes    int
	// BatchDelay is how long a group commit waits for more appends once it
	// has one; a larger delay gives fewer, bigger commits.
	BatchDelay time.Duration
	// Start is the initial frontier of a new database: times below it are
	// taken as already complete. An existing database keeps the start it
	// was created with, and Open refuses a Start that differs from it
	// with a *StartError (ErrStartMismatch); a zero Start is checked only
	// when StartSet is set, so that the zero Options open any database.
	Start uint64
	// StartSet says that Start was given even when it is zero (cdclog
	// ingest sets it for an explicit --start 0).
	StartSet bool
	// OnError says what Append does with a message that violates the
	// protocol or is invalid: Fail returns an error for it (the messages
	// before it in the call are committed), Skip counts and drops it,
	// Quarantine stores it in the quarantine bucket.
	OnError cdc.ErrorPolicy
	// Logger receives progress and warnings; nil means slog.Default().
	Logger *slog.Logger
	// Sink, when set, is the exactly-once output file (OpenFileSink);
	// SinkName identifies it across runs (its absolute path) and
	// SinkFormat is the format written. Open checks that the file holds
	// what this database wrote before it writes to it or cuts it (see
	// "The output file" in the package documentation).
	Sink       Sink
	SinkName   string
	SinkFormat cdc.Format
	// Live, when set, is a stream (stdout, a pipe): it receives each
	// batch's output (in LiveFormat) after the batch commits, and first
	// what an interrupted run before may not have written to its stream:
	// at least once (see "Streams" in the package documentation). A write
	// error stops the processor with ErrLiveOutput.
	Live       io.Writer
	LiveFormat cdc.Format
	// LockTimeout bounds the wait for another process's lock: zero means
	// store.DefaultLockTimeout, a negative value (store.NoWait) tries
	// once without waiting.
	LockTimeout time.Duration
	// NoSync skips fsyncs: only for throwaway databases.
	NoSync bool
	// PendingMemory is the memory the receiver's pending state may take
	// (as the receiver counts it) before what is beyond it is left on
	// disk, in the WAL, and read back as the frontier comes near (see
	// "The pending state on disk" in the package documentation). Zero
	// means demangle.DefaultBudget (32 MiB), or the value of the
	// environment variable CDCLOG_PENDING_MEMORY (a number of bytes) when
	// it is set: a knob for tests and tuning, for a cdclog whose command
	// line does not set this field.
	PendingMemory int64
	// NoCreate refuses to create a database: a missing path, or a file
	// that holds no committed cdclog state, is store.ErrNotExist (for
	// commands such as cdclog publish that only read what ingest wrote).
	NoCreate bool
	// Observer, when set, receives each commit's figures and the output
	// file's fsync times (for metrics); nil measures nothing.
	Observer Observer
}

// Validate reports options that Open refuses, as a *cdc.OptionError: a
// policy that is none of cdc.Fail, cdc.Skip and cdc.Quarantine, a Sink or
// Live output in a format that is neither cdc.JSONL nor cdc.Msgpack, or a
// negative BatchMessages, BatchBytes, BatchDelay or PendingMemory (zero
// means the default; no value below it does).
func (o Options) Validate() error {
	if err := o.OnError.Validate(); err != nil {
		return err
	}
	for _, n := range []struct {
		option string // the flag, or the field where no flag sets it
		value  int64
	}{
		{"--batch-messages", int64(o.BatchMessages)},
		{"BatchBytes", int64(o.BatchBytes)},
		{"--batch-delay", int64(o.BatchDelay)},
		{"PendingMemory", o.PendingMemory},
	} {
		if n.value < 0 {
			return &cdc.OptionError{Option: n.option, Reason: "must not be negative (zero means the default)"}
		}
	}
	for _, out := range []struct {
		set    bool
		format cdc.Format
	}{{o.Sink != nil, o.SinkFormat}, {o.Live != nil, o.LiveFormat}} {
		if out.set && out.format > cdc.Msgpack {
			return &cdc.OptionError{Option: "--out-format", Reason: fmt.Sprintf("%v is not jsonl or msgpack", out.format)}
		}
	}
	return nil
}

// pendingMemoryEnv names the environment variable that sets the default
// PendingMemory.
const pendingMemoryEnv = "CDCLOG_PENDING_MEMORY"

func (o *Options) withDefaults() Options {
	c := *o
	if c.BatchMessages <= 0 {
		c.BatchMessages = DefaultBatchMessages
	}
	if c.BatchBytes <= 0 {
		c.BatchBytes = DefaultBatchBytes
	}
	if c.BatchDelay <= 0 {
		c.BatchDelay = DefaultBatchDelay
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.PendingMemory <= 0 {
		if n, err := strconv.ParseInt(os.Getenv(pendingMemoryEnv), 10, 64); err == nil && n > 0 {
			c.PendingMemory = n
		}
	}
	return c
}
