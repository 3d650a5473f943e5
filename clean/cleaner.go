package clean

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/internal/memlimit"
)

// cleaner runs batches through an in-memory receiver, on the goroutine
// that called Stream.
type cleaner struct {
	opts Options
	log  *slog.Logger
	pool batchPool
	// spare holds written output slices for reuse: growing a fresh one for
	// every batch was an eighth of the receiver goroutine's time.
	spare    chan []cdc.Message
	recv     *demangle.Receiver
	store    *demangle.MemStore
	guard    *memlimit.Guard
	in       uint64
	out      uint64
	rejected uint64
}

// outputLimit and outputBytes bound one part of a release (records, and
// bytes of their data): a time of ten million updates made one output
// slice of a gigabyte before its first record was written.
const (
	outputLimit = 2 * BatchSize
	outputBytes = 4 << 20
)

func newCleaner(o Options) *cleaner {
	c := &cleaner{opts: o, log: newLog(o.Log), spare: make(chan []cdc.Message, 8),
		recv: demangle.New(o.Start), store: &demangle.MemStore{}, guard: memlimit.Watch(o.MaxMemory)}
	c.recv.UseStore(c.store, o.Budget)
	c.recv.SetOutputLimit(outputLimit, outputBytes)
	return c
}

// run pushes every batch and sends each batch's output on outputs. The
// output messages stay valid after later pushes (the receiver never
// reuses what it emitted), so they can be written concurrently.
func (c *cleaner) run(ctx context.Context, batches <-chan *batch, outputs chan<- []cdc.Message) error {
	for b := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		out, err := c.push(c.newOutput(), b, outputs)
		if err == nil {
			err = c.bound()
		}
		c.send(out, outputs)
		if err != nil {
			return err
		}
		if c.opts.Progress != nil {
			f, done := c.recv.Frontier()
			c.opts.Progress(Progress{Offset: b.offset, Messages: len(b.msgs) + len(b.rejects), Frontier: f, Done: done})
		}
		if b.err != nil {
			return b.err
		}
		c.pool.put(b)
	}
	return nil
}

// newOutput returns an empty output slice, one the writer is done with
// when there is one.
func (c *cleaner) newOutput() []cdc.Message {
	select {
	case out := <-c.spare:
		return out
	default:
		return make([]cdc.Message, 0, 2*BatchSize)
	}
}

// send hands out to the writer.
func (c *cleaner) send(out []cdc.Message, outputs chan<- []cdc.Message) {
	c.out += uint64(len(out))
	outputs <- out
}

// push pushes the messages of b, appending what they release to out, and
// sets its rejects aside in their places among them (cdc.Reject.Index),
// until the first error that stops the stream. A release larger than the
// receiver's output limit (a big time) goes to outputs in parts as it is
// made, so that it is never in memory whole.
func (c *cleaner) push(out []cdc.Message, b *batch, outputs chan<- []cdc.Message) ([]cdc.Message, error) {
	k := 0 // the first of b.rejects not set aside yet
	for i := range b.msgs {
		for ; k < len(b.rejects) && b.rejects[k].Index <= i; k++ {
			if err := c.reject(&b.rejects[k]); err != nil {
				return out, err
			}
		}
		var err error
		out, _, err = c.recv.Push(out, &b.msgs[i], b.pos[i])
		c.in++
		for c.recv.Releasing() && !errors.Is(err, demangle.ErrStore) {
			// Also after a violation: the statement's other claims may
			// have released, and that release is owed whatever comes.
			c.send(out, outputs)
			var cerr error
			if out, cerr = c.recv.Continue(c.newOutput()); cerr != nil {
				err = cerr
			}
		}
		if err != nil && !errors.Is(err, demangle.ErrStore) {
			err = c.refused(&b.msgs[i], b.pos[i], err)
		}
		if err == nil {
			if d := c.recv.Deferred(); len(d) > 0 {
				err = c.deferred(d)
			}
		}
		if err != nil {
			return out, err
		}
	}
	for ; k < len(b.rejects); k++ {
		if err := c.reject(&b.rejects[k]); err != nil {
			return out, err
		}
	}
	return out, nil
}

// refused applies the policy to a message the receiver refused (in part,
// for a statement some of whose claims it holds): under fail the error is
// returned, otherwise the message is counted and set aside.
func (c *cleaner) refused(m *cdc.Message, at cdc.Pos, err error) error {
	if c.opts.OnError == cdc.Fail {
		return err
	}
	rj := demangle.RejectOf(m, at, err)
	return c.reject(&rj)
}

// deferred applies the policy to d, the violations found in messages
// taken back from beyond the receiver's horizon during the last push.
func (c *cleaner) deferred(d []*demangle.ViolationError) error {
	for _, v := range d {
		if err := c.refused(&v.Msg, v.At, v); err != nil {
			return err
		}
	}
	return nil
}

// reject counts, logs and, under quarantine, writes one rejected message.
func (c *cleaner) reject(rj *cdc.Reject) error {
	c.rejected++
	c.log.Warn("rejected input", "error", rj.String())
	if c.opts.OnError != cdc.Quarantine {
		return nil
	}
	if err := c.opts.Quarantine.Write(rj); err != nil {
		return &WriteError{Quarantine: true, Err: err}
	}
	return nil
}

// bound sheds what the receiver holds beyond its budget into the store,
// and stops the stream once the heap has passed MaxMemory.
func (c *cleaner) bound() error {
	if c.recv.NeedShed() {
		if err := c.recv.Shed(); err != nil {
			return err
		}
	}
	live, over := c.guard.Exceeded()
	if !over {
		return nil
	}
	times, updates := c.recv.PendingSize()
	f, _ := c.recv.Frontier()
	return &MemoryError{Live: live, Max: c.guard.Max(), Frontier: f, Times: times, Updates: updates, Beyond: c.store.Len()}
}

// result is what the stream did so far.
func (c *cleaner) result() Result {
	times, updates := c.recv.PendingSize()
	return Result{Messages: c.in, Records: c.out, Rejected: c.rejected, Stats: c.recv.Stats(),
		PendingTimes: times, PendingUpdates: updates, PendingBeyond: c.store.Len(), Stuck: c.recv.Stuck()}
}
