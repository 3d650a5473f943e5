package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/cdclog/cdclog/cdc"
)

// batchSize is the number of messages decoded per batch handed from the
// decoding goroutine to the receiver's.
const batchSize = 4096

// inputBatch is a run of decoded messages with their positions, the input
// rejected along the way, and where the input stands after them.
type inputBatch struct {
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
// receiver and the WAL keep copies of what they need), sparing the
// collector a steady stream of large arrays. The zero value is ready.
type batchPool struct{ p sync.Pool }

func (bp *batchPool) get() *inputBatch {
	if b, ok := bp.p.Get().(*inputBatch); ok {
		return b
	}
	return &inputBatch{msgs: make([]cdc.Message, 0, batchSize), pos: make([]cdc.Pos, 0, batchSize)}
}

// put returns b for reuse; the caller no longer uses it. The messages are
// not cleared: the next fill overwrites each one before it is read, what
// the stale ones refer to (a few data blocks) is bounded by the batch
// size, and clearing cost 1.8% of ingest's CPU.
func (bp *batchPool) put(b *inputBatch) {
	*b = inputBatch{msgs: b.msgs[:0], pos: b.pos[:0]}
	bp.p.Put(b)
}

// readBatches decodes r into batches sent on out (see readBatch). It
// closes out at the end; stop aborts it early. Batches come from pool.
func readBatches(r *cdc.Reader, policy cdc.ErrorPolicy, out chan<- *inputBatch, stop <-chan struct{}, pool *batchPool) {
	defer close(out)
	for {
		b, more := readBatch(r, policy, pool)
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

// readBatch decodes the next batch of up to batchSize messages from r,
// applying policy to decode errors: fail stops at the first, skip and
// quarantine collect them in the batch and go on (a fatal error always
// stops). It reports whether the input goes on after the batch: not at its
// end, nor after an error, which the batch carries. The batch comes from
// pool.
func readBatch(r *cdc.Reader, policy cdc.ErrorPolicy, pool *batchPool) (*inputBatch, bool) {
	b := pool.get()
	var err error
	for len(b.msgs) < batchSize {
		b.msgs = b.msgs[:len(b.msgs)+1]
		err = r.Next(&b.msgs[len(b.msgs)-1])
		if err == nil {
			b.pos = append(b.pos, r.Pos())
			continue
		}
		b.msgs = b.msgs[:len(b.msgs)-1]
		var de *cdc.DecodeError
		if errors.As(err, &de) && !de.Fatal && policy != cdc.Fail {
			b.rejects = append(b.rejects, r.Reject(de))
			err = nil
			continue
		}
		break
	}
	b.offset, b.line = r.Offset(), r.Line()
	if err != nil && err != io.EOF {
		b.err = err
		// The input stops before the bad message, not after it: ingest
		// commits this offset as where to resume, and a rerun must meet
		// the message again, or read it once it is corrected.
		var de *cdc.DecodeError
		if errors.As(err, &de) {
			b.offset, b.line = de.Pos.Offset, max(de.Pos.Line-1, 0)
		}
	}
	return b, err == nil
}

// openInput opens a named input; "-" or "" is stdin.
func openInput(e *env, name string) (io.Reader, string, func(), error) {
	if name == "" || name == "-" {
		return e.stdin, "stdin", func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, name, nil, withCode(exitFailure, fmt.Errorf("open input: %w", err))
	}
	return f, name, func() { f.Close() }, nil
}
