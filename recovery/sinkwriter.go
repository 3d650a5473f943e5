package recovery

import (
	"fmt"
	"hash/crc32"
	"sync"
	"time"
)

// sinkWriter puts committed output into the output file: the commit
// goroutine writes each batch's bytes once the batch has committed (so a
// request's records are in the file when its result is delivered), and
// the writer's own goroutine fsyncs them, so that the fsync of one batch's
// output runs while the next batch commits. Each commit records what the
// last fsync made durable (see durable): so the file only ever holds
// committed records, and after a crash what follows the committed size is
// the output log's next records, the last perhaps torn, which Open can
// tell apart from anything else (see recoverSink).
//
// After an error, or once stopped, it writes nothing more and reports the
// error for every later write: bytes written past a failed write would
// leave a gap.
type sinkWriter struct {
	sink Sink
	// synced, when set (before the first write), is told how long each
	// fsync took; failed is told an fsync's error.
	synced func(time.Duration)
	failed func(error)

	mu      sync.Mutex
	cond    sync.Cond
	written sinkMark // what the file holds
	durable sinkMark // what the last fsync made durable
	closed  bool
	err     error
	done    chan struct{}
}

// sinkMark is a point in the output file: its size there, the first
// record after it, the chain of the stream up to it, and the checksums
// the checkpoint keeps (the CRC-32C of every byte before it, and its last
// sinkTailSize bytes).
type sinkMark struct {
	size  int64
	next  uint64
	chain streamChain
	crc   uint32
	tail  tailWindow
}

// markOf returns the mark a file's state records.
func markOf(cs *sinkState, tail *tailWindow) sinkMark {
	return sinkMark{size: cs.Size, next: cs.Next, chain: cs.chain(), crc: cs.FileCRC,
		tail: tailWindow{b: append([]byte(nil), tail.b...)}}
}

// stamp records the mark in a file's state.
func (m *sinkMark) stamp(cs *sinkState) {
	cs.Size, cs.Next, cs.FileCRC = m.size, m.next, m.crc
	cs.setChain(&m.chain)
	m.tail.stamp(cs)
}

// advance moves the mark past b, which holds the records before next and
// leaves the stream at chain.
func (m *sinkMark) advance(b []byte, next uint64, chain streamChain) {
	m.size += int64(len(b))
	m.next, m.chain = next, chain
	m.crc = crc32.Update(m.crc, sinkCRCTable, b)
	m.tail.push(b)
}

// copyTo sets dst to m, reusing dst's tail buffer.
func (m *sinkMark) copyTo(dst *sinkMark) {
	b := append(dst.tail.b[:0], m.tail.b...)
	*dst = *m
	dst.tail.b = b
}

// maxUnsynced bounds how far the written bytes may run ahead of the
// durable ones: a write waits for the fsync under way beyond it.
const maxUnsynced = 64 << 20

// newSinkWriter starts the writer for sink, whose file ends at mark (its
// bytes durable); a nil sink gives a writer that has nothing to write.
func newSinkWriter(sink Sink, at sinkMark) *sinkWriter {
	s := &sinkWriter{sink: sink, done: make(chan struct{})}
	at.copyTo(&s.written)
	at.copyTo(&s.durable)
	s.cond.L = &s.mu
	if sink == nil {
		close(s.done)
		return s
	}
	go s.loop()
	return s
}

// loop fsyncs what was written, whenever something was, until closed.
func (s *sinkWriter) loop() {
	defer close(s.done)
	var snap sinkMark
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for s.err == nil && !s.closed && s.written.size == s.durable.size {
			s.cond.Wait()
		}
		if s.err != nil || s.written.size == s.durable.size {
			return // failed, or closed with everything durable
		}
		s.written.copyTo(&snap)
		s.mu.Unlock()
		err := s.sync()
		s.mu.Lock()
		if err != nil {
			s.setErr(err)
			s.mu.Unlock()
			if s.failed != nil {
				s.failed(err)
			}
			s.mu.Lock()
			return
		}
		snap.copyTo(&s.durable)
		s.cond.Broadcast()
	}
}

func (s *sinkWriter) sync() error {
	var start time.Time
	if s.synced != nil {
		start = time.Now()
	}
	if err := s.sink.Sync(); err != nil {
		return fmt.Errorf("fsync output file: %w", err)
	}
	if s.synced != nil {
		s.synced(time.Since(start))
	}
	return nil
}

// write appends b, the committed records before next, which leave the
// stream at chain, and has the writer's goroutine fsync it.
func (s *sinkWriter) write(b []byte, next uint64, chain streamChain) error {
	if len(b) == 0 || s.sink == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.err == nil && s.written.size-s.durable.size > maxUnsynced {
		s.cond.Wait()
	}
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return fmt.Errorf("write output file: %w", ErrClosed)
	}
	if _, err := s.sink.Write(b); err != nil {
		err = fmt.Errorf("write output file: %w", err)
		s.setErr(err)
		return err
	}
	s.written.advance(b, next, chain)
	s.cond.Broadcast()
	return nil
}

// durableMark copies the durable mark into dst.
func (s *sinkWriter) durableMark(dst *sinkMark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.durable.copyTo(dst)
}

// durableSize returns the size up to which the file is known durable.
func (s *sinkWriter) durableSize() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.durable.size
}

// setErr records the writer's first error; the caller holds mu.
func (s *sinkWriter) setErr(err error) {
	if s.err == nil {
		s.err = err
		s.cond.Broadcast()
	}
}

// stop makes a waiting write, and every later one, fail with err.
func (s *sinkWriter) stop(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setErr(err)
}

// close waits until what was written is durable and ends the writer's
// goroutine. It returns the writer's error, if any.
func (s *sinkWriter) close() error {
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
