package clean

import (
	"context"
	"log/slog"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
)

// A RejectWriter receives the messages Stream rejects under policy
// cdc.Quarantine. *cdc.RejectWriter is one; Stream neither flushes nor
// closes it.
type RejectWriter interface {
	Write(*cdc.Reject) error
}

// Options say how Stream treats bad input and memory. The zero value
// stops at the first bad message, reports nothing and sets no memory
// limit.
type Options struct {
	// Start is the receiver's initial frontier: times below it count as
	// complete and already emitted.
	Start uint64
	// OnError is what to do with a message that cannot be decoded or
	// that the receiver rejects (a protocol violation): cdc.Fail (the
	// zero value) stops Stream with its error; cdc.Skip logs it and goes
	// on; cdc.Quarantine also writes it to Quarantine, which must then be
	// set.
	OnError    cdc.ErrorPolicy
	Quarantine RejectWriter
	// Log receives a warning for each rejected message; nil discards
	// them.
	Log *slog.Logger
	// MaxMemory, when not zero, stops Stream with a *MemoryError once the
	// Go heap that the last collection found live passes MaxMemory bytes.
	// The heap is the whole process's. Stream does not set the runtime's
	// soft memory limit: a program that wants the collector to work
	// harder near MaxMemory calls debug.SetMemoryLimit itself.
	MaxMemory uint64
	// Budget is the held state, in bytes as the receiver counts it, that
	// the receiver keeps as it is; past it, it packs what lies beyond its
	// horizon into a demangle.MemStore (demangle.Receiver.UseStore). Zero
	// means demangle.DefaultBudget. The output does not depend on it.
	Budget int64
	// Progress, when not nil, is called after each batch of input, on the
	// goroutine that called Stream.
	Progress func(Progress)
}

// Progress is where Stream stands after a batch of input.
type Progress struct {
	// Offset is how far into the input the batch ends, in bytes.
	Offset int64
	// Messages is the number of messages in the batch, the ones that
	// could not be decoded included.
	Messages int
	// Frontier and Done are the receiver's (demangle.Receiver.Frontier).
	Frontier uint64
	Done     bool
}

// Result counts what Stream did, also when it stopped on an error.
type Result struct {
	// Messages is the number of decoded messages pushed to the receiver,
	// rejected ones included.
	Messages uint64
	// Records is the number of messages the receiver released: the clean
	// stream handed to the writer (see Stream for a write error).
	Records uint64
	// Rejected counts the messages skipped or quarantined, those that
	// could not be decoded included.
	Rejected uint64
	// Stats are the receiver's counters.
	Stats demangle.Stats
	// PendingTimes and PendingUpdates are what the receiver holds at the
	// end (demangle.Receiver.PendingSize); PendingBeyond counts the
	// messages it keeps packed beyond its horizon.
	PendingTimes, PendingUpdates int
	PendingBeyond                int64
	// Stuck says where the frontier ends and what it waits for.
	Stuck demangle.Stuck
}

// Stream reads a CDC stream from r, runs it through a fresh in-memory
// receiver and writes the clean stream to w: each time's updates once, in
// canonical order, released only when that time and every earlier one
// are complete, each release followed by its progress statement. It
// flushes w before it returns.
//
// It first checks o (see Options.Validate) and returns its
// *cdc.OptionError before it reads anything. Then it returns at the end of
// r, or at the first error: under cdc.Fail a
// message that cannot be decoded (*cdc.DecodeError) or that the receiver
// rejects (*demangle.ViolationError, or an error wrapping
// demangle.ErrInvalid or demangle.ErrNaive); an input that cannot be
// read; an output or quarantine that cannot be written (*WriteError); a
// heap past MaxMemory (*MemoryError); or ctx's error once it is done
// (looked at between batches). What the receiver released before the
// error is written to w, and what it would release after is not: the
// output is a prefix of the whole clean stream. Under cdc.Skip and
// cdc.Quarantine a bad message is counted, logged and dropped, and the
// stream goes on.
//
// r is read on a goroutine of its own, and w written on another; Progress
// and the RejectWriter are called on the caller's goroutine. When Stream
// returns before the end of r, the reading goroutine may still be inside
// a read of r: it reads no further message once that returns. On a write
// error, Records counts messages handed to w that it may not have taken.
func Stream(ctx context.Context, r *cdc.Reader, w *cdc.Writer, o Options) (Result, error) {
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	c := newCleaner(o)
	dec := &decoder{r: r, policy: o.OnError, pool: &c.pool}
	batches := make(chan *batch, 4)
	stop := make(chan struct{})
	defer func() {
		dec.stopped.Store(true)
		close(stop)
	}()
	go dec.run(batches, stop)

	outputs := make(chan []cdc.Message, 4)
	written := make(chan error, 1)
	go func() { written <- writeOutputs(w, outputs, c.spare) }()
	err := c.run(ctx, batches, outputs)
	close(outputs)
	if werr := <-written; werr != nil && err == nil {
		err = &WriteError{Err: werr}
	}
	return c.result(), err
}

// writeOutputs encodes and writes the receiver's output on a goroutine of
// its own, so the receiver's goroutine only pushes. After a write error it
// drains the channel and returns the error; otherwise it flushes w.
func writeOutputs(w *cdc.Writer, outputs <-chan []cdc.Message, spare chan<- []cdc.Message) error {
	var err error
	for out := range outputs {
		for i := 0; i < len(out) && err == nil; i++ {
			err = w.Write(&out[i])
		}
		select { // not cleared, like input batches (see batchPool.put)
		case spare <- out[:0]: // back to the receiver's goroutine for reuse
		default:
		}
	}
	if err == nil {
		err = w.Flush()
	}
	return err
}

// newLog returns l, or a logger that discards everything when l is nil.
func newLog(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
