package recovery

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/cdclog/cdclog/cdc"
)

// canonicalData returns msgs with every update's data in its canonical
// encoding: msgs itself when it already is (the usual case, which costs
// one scan of each value), otherwise a copy. A value that is not valid
// JSON is an error naming the message: its position in pos when pos has
// one, else its number in msgs counted from 1. msgs is never modified.
func canonicalData(msgs []cdc.Message, pos []cdc.Pos) ([]cdc.Message, error) {
	out, copied := msgs, false
	for i := range msgs {
		m := &msgs[i]
		if m.Kind != cdc.KindUpdate || cdc.IsCanonical(m.Update.Data) {
			continue
		}
		data, err := cdc.AppendCanonical(nil, m.Update.Data)
		if err != nil {
			where := fmt.Sprintf("message %d", i+1)
			if i < len(pos) && pos[i] != (cdc.Pos{}) {
				where = pos[i].String()
			}
			return nil, fmt.Errorf("%s (%s): %w: %v", where, m, ErrInvalidData, err)
		}
		if !copied {
			out, copied = append([]cdc.Message(nil), msgs...), true
		}
		out[i].Update.Data = data
	}
	return out, nil
}

// Request is one call's worth of messages for Submit.
//
// A request is committed with the group commit that gathers it, except one
// whose messages release more than a batch's output bound (twice
// Options.BatchMessages records or BatchBytes bytes, such as progress that
// completes many held times at once): it is committed in parts, in
// consecutive batches, each ending once the output reaches the bound, so
// that memory stays bounded whatever a message releases. Its Cursor is
// committed, and its result delivered, with the last part. Should a
// storage failure stop the processor in between, the request fails with
// ErrFailed and its Result counts the messages of the parts committed
// (Applied: they are the first ones); sending the request again, or
// resuming from its cursor, is harmless, since the committed messages are
// then duplicates.
type Request struct {
	// Msgs are the messages to push, in order; Pos, when not nil, gives
	// each one's position (for errors, quarantine and the WAL).
	Msgs []cdc.Message
	Pos  []cdc.Pos
	// Rejects is input the producer could not decode; it is counted
	// (policy Skip) or stored (policy Quarantine) with this batch, each
	// in its place among the messages set aside: just before Msgs[Index]
	// (after the last message when Index is len(Msgs) or more). Their
	// Index values do not decrease.
	Rejects []cdc.Reject
	// Cursor, when not empty, names a producer position committed in the
	// same transaction as this request, with value CursorValue, read back
	// with Processor.Cursor. It is not updated when the request fails.
	Cursor      string
	CursorValue []byte
	// CursorCheck makes the request conditional: it is applied only if
	// the cursor then holds CursorPrev (empty: never set); otherwise it
	// fails with ErrCursorMoved and changes nothing. A producer that keeps
	// several requests in flight chains them this way, each expecting the
	// previous one's CursorValue: when one fails, the requests submitted
	// after it cannot commit a position past the messages it did not
	// apply.
	CursorCheck bool
	CursorPrev  []byte
	// LogSource, when not empty, is the source name that the write-ahead
	// log records for the request's messages, in place of each
	// position's Source. The checkpoint keeps every source name the log
	// has used, so a producer that names each request apart in its
	// positions (cdclog serve's "request 17") logs them under one name.
	LogSource string
	// Flush commits the request's group commit without waiting
	// Options.BatchDelay for more requests: set it on the last request of
	// an input, so that the end of a finished file is not held back.
	Flush bool
}

// Result says what became of a request's messages.
type Result struct {
	Accepted    int
	Duplicates  int
	Stale       int
	Skipped     int
	Quarantined int
	// Applied is the number of messages processed; under policy Fail it
	// stops at the first bad one, whose error the call returns.
	Applied int
	// Output is the number of output records the request released.
	Output int
	// Rejected is the first of the request's input set aside (skipped or
	// quarantined), a message or one of its Rejects, in input order: where
	// it was and why (Raw is not set). Nil when nothing was set aside.
	Rejected *cdc.Reject
}

// Pending is a submitted request waiting for its commit.
type Pending struct {
	done chan struct{}
	// released, when set (by Ingest), is closed once the processor no
	// longer reads the request's slices: after its batch is encoded for
	// the WAL, or at the latest when it is finished.
	released     chan struct{}
	releasedOnce atomic.Bool
	res          Result
	err          error
}

// Wait blocks until the request is committed (or failed) or ctx ends. A
// ctx error does not withdraw the request: it may still commit.
func (w *Pending) Wait(ctx context.Context) (Result, error) {
	select {
	case <-w.done:
		return w.res, w.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// Done is closed once the result is available.
func (w *Pending) Done() <-chan struct{} { return w.done }

func (w *Pending) finish(res Result, err error) {
	w.release()
	w.res, w.err = res, err
	close(w.done)
}

// release says that the processor is done reading the request's Msgs,
// Pos, Rejects and cursor values; it may be called more than once.
func (w *Pending) release() {
	if w.released != nil && w.releasedOnce.CompareAndSwap(false, true) {
		close(w.released)
	}
}

// LogAttrs are the log fields that say what became of the messages:
// accepted, duplicates, stale, skipped, quarantined, and records_out (the
// output records released), as cdclog ingest and serve log them.
func (r *Result) LogAttrs() []slog.Attr {
	return []slog.Attr{slog.Int("accepted", r.Accepted), slog.Int("duplicates", r.Duplicates),
		slog.Int("stale", r.Stale), slog.Int("skipped", r.Skipped), slog.Int("quarantined", r.Quarantined),
		slog.Int("records_out", r.Output)}
}
