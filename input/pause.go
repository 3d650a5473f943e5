package input

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// feedChunk is how much a feeder reads at a time, and feedChunks how many
// chunks it may read ahead.
const (
	feedChunk  = 64 << 10
	feedChunks = 4
)

// drainWait is how long a stopped feeder's last read may take to hand
// over what it got: a read that is blocked has nothing, one that has
// returned delivers at once.
const drainWait = 20 * time.Millisecond

// feeder reads an io.Reader on a goroutine of its own and serves what it
// read to a cdc.Reader, returning cdc.ErrPaused when nothing is ready.
// It is not safe for concurrent use; its goroutine is its own.
type feeder struct {
	chunks chan feedResult // read, in order; never blocks the goroutine
	free   chan []byte
	quit   chan struct{}
	exited chan struct{} // closed when the goroutine has ended
	once   sync.Once
	// r is read by the goroutine, which begin starts: not before the
	// stream is read, so that two streams over one input (stdin given
	// twice, one named pipe twice) read it in turn, not both at once.
	r     io.Reader
	begun sync.Once
	// deadline bounds the wait, once stopped, for a read in progress.
	deadline time.Time

	cur  []byte // what is left of the chunk being served
	buf  []byte // the chunk being served, to give back
	err  error  // the reader's error, once its chunks are served
	done bool   // stopped: the end is served as io.EOF
}

type feedResult struct {
	b   []byte
	err error
}

// newFeeder returns a feeder of r, which begins reading it when it is
// first read from (or waited on).
func newFeeder(r io.Reader) *feeder {
	f := &feeder{
		chunks: make(chan feedResult, feedChunks+1),
		free:   make(chan []byte, feedChunks),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
		r:      r,
	}
	for range feedChunks {
		f.free <- make([]byte, feedChunk)
	}
	return f
}

// begin starts the goroutine that reads r, once. A feeder stopped before
// it began never reads (see stop).
func (f *feeder) begin() { f.begun.Do(func() { go f.loop(f.r) }) }

func (f *feeder) loop(r io.Reader) {
	defer close(f.exited)
	for {
		var buf []byte
		select {
		case buf = <-f.free:
		case <-f.quit:
			return
		}
		select {
		case <-f.quit: // stopped while waiting for a buffer
			return
		default:
		}
		n, err := r.Read(buf[:cap(buf)])
		// chunks holds as many as there are buffers, and one more for the
		// end, so this never blocks: a stopped feeder's goroutine ends
		// after its last read returns.
		f.chunks <- feedResult{b: buf[:n], err: err}
		if err != nil {
			return
		}
	}
}

// Read serves the chunks read so far, and cdc.ErrPaused when there is
// none at once.
func (f *feeder) Read(p []byte) (int, error) {
	f.begin()
	for len(f.cur) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		select {
		case c := <-f.chunks:
			f.take(c)
		default:
			if !f.done {
				return 0, cdc.ErrPaused
			}
			if !f.drain() {
				f.err = io.EOF
			}
		}
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

// take makes c the chunk being served, giving back the one before.
func (f *feeder) take(c feedResult) {
	if f.buf != nil {
		f.free <- f.buf[:0]
	}
	f.cur, f.buf = c.b, c.b
	if c.err != nil {
		f.err = c.err
	}
}

// drain, once stopped, waits for what a read in progress hands over
// (until the goroutine ends, or drainWait after the stop), and reports
// whether it got a chunk.
func (f *feeder) drain() bool {
	timer := time.NewTimer(time.Until(f.deadline))
	defer timer.Stop()
	select {
	case c := <-f.chunks:
		f.take(c)
		return true
	case <-f.exited:
		select {
		case c := <-f.chunks:
			f.take(c)
			return true
		default:
			return false
		}
	case <-timer.C:
		return false
	}
}

// wait blocks until Read has something to serve or ctx ends.
func (f *feeder) wait(ctx context.Context) error {
	f.begin()
	if len(f.cur) > 0 || f.err != nil || f.done {
		return nil
	}
	select {
	case c := <-f.chunks:
		f.take(c)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop ends the reading: the chunks already read are still served, then
// io.EOF. It does not interrupt a read in progress (a blocked read of a
// pipe returns when its producer writes or closes).
func (f *feeder) stop() {
	// A feeder that never began never will: no goroutine to wait for.
	f.begun.Do(func() { close(f.exited) })
	if !f.done {
		f.done, f.deadline = true, time.Now().Add(drainWait)
	}
	f.once.Do(func() { close(f.quit) })
}
