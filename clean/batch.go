package clean

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/cdclog/cdclog/cdc"
)

// BatchSize is the number of messages decoded per batch handed from the
// decoding goroutine to the receiver's.
const BatchSize = 4096

// batch is a run of decoded messages with their positions, the input
// rejected along the way, and where the input stands after them.
type batch struct {
	msgs    []cdc.Message
	pos     []cdc.Pos
	rejects []cdc.Reject // input that could not be decoded
	offset  int64        // input offset just past the batch (before err's message)
	line    int64        // lines consumed after the batch (before err's message)
	// err is a decode error that stops the input (policy fail, or a fatal
	// one) or a read error; the batch's messages before it are good.
	err error
}

// batchPool recycles batches once their messages have been pushed (the
// receiver keeps copies of what it holds), sparing the decoder a steady
// stream of large arrays. The zero value is ready.
type batchPool struct{ p sync.Pool }

func (bp *batchPool) get() *batch {
	if b, ok := bp.p.Get().(*batch); ok {
		return b
	}
	return &batch{msgs: make([]cdc.Message, 0, BatchSize), pos: make([]cdc.Pos, 0, BatchSize)}
}

// put returns b for reuse; the caller no longer uses it. The messages are
// not cleared: the next fill overwrites each one before it is read, what
// the stale ones refer to (a few data blocks) is bounded by the batch
// size, and clearing cost 1.8% of ingest's CPU.
func (bp *batchPool) put(b *batch) {
	*b = batch{msgs: b.msgs[:0], pos: b.pos[:0]}
	bp.p.Put(b)
}

// decoder turns a cdc.Reader into batches.
type decoder struct {
	r      *cdc.Reader
	policy cdc.ErrorPolicy
	pool   *batchPool
	// stopped is set when the receiver's goroutine wants no more: the
	// decoder reads no further message once it sees it.
	stopped atomic.Bool
}

// run decodes the input into batches sent on out (see next). It closes
// out at the end, or returns early once stop is closed.
func (d *decoder) run(out chan<- *batch, stop <-chan struct{}) {
	defer close(out)
	for {
		b, more := d.next()
		select {
		case out <- b:
		case <-stop:
			return
		}
		if !more {
			return
		}
	}
}

// next decodes the next batch of up to BatchSize messages, applying the
// policy to decode errors: fail stops at the first, skip and quarantine
// collect them in the batch and go on (a fatal error always stops). It
// reports whether the input goes on after the batch: not at its end, nor
// after an error, which the batch carries, nor once stopped is set.
func (d *decoder) next() (*batch, bool) {
	b := d.pool.get()
	var err error
	for len(b.msgs) < BatchSize && !d.stopped.Load() {
		b.msgs = b.msgs[:len(b.msgs)+1]
		err = d.r.Next(&b.msgs[len(b.msgs)-1])
		if err == nil {
			b.pos = append(b.pos, d.r.Pos())
			continue
		}
		b.msgs = b.msgs[:len(b.msgs)-1]
		var de *cdc.DecodeError
		if errors.As(err, &de) && !de.Fatal && d.policy != cdc.Fail {
			rj := d.r.Reject(de)
			rj.Index = len(b.msgs)
			b.rejects = append(b.rejects, rj)
			err = nil
			continue
		}
		break
	}
	b.offset, b.line = d.r.Offset(), d.r.Line()
	if err != nil && err != io.EOF {
		b.err = err
		// The input stops before the bad message, not after it: the
		// offset says how much of the input was good.
		var de *cdc.DecodeError
		if errors.As(err, &de) {
			b.offset, b.line = de.Pos.Offset, max(de.Pos.Line-1, 0)
		}
	}
	return b, err == nil && !d.stopped.Load()
}
