package recovery

import (
	"fmt"
	"sync"
	"time"
)

// sinkWriter writes and fsyncs output bytes on its own goroutine, in the
// order they were handed to it. It never writes past the output file's
// Limit as of the last durable checkpoint (see sinkAllowance): a write
// that would waits until a commit raises it. After an error, or once
// stopped, it writes nothing more and reports that error for every later
// write: bytes written past a failed write would leave a gap.
type sinkWriter struct {
	sink Sink
	jobs chan sinkJob
	end  int64 // the file's size once every job handed over is written
	// synced, when set (before the first write), is told how long each
	// fsync took.
	synced func(time.Duration)

	mu      sync.Mutex
	cond    sync.Cond
	limit   int64 // the durable Limit
	stopped error
}

type sinkJob struct {
	b    []byte
	end  int64 // the file's size once b is written
	done chan error
}

// newSinkWriter starts the writer for sink, whose file is size bytes long
// with a durable Limit of limit; a nil sink gives a writer that has
// nothing to write.
func newSinkWriter(sink Sink, size, limit int64) *sinkWriter {
	s := &sinkWriter{sink: sink, end: size, limit: limit}
	s.cond.L = &s.mu
	if sink != nil {
		s.jobs = make(chan sinkJob, 2)
		go s.loop()
	}
	return s
}

func (s *sinkWriter) loop() {
	var failed error
	for j := range s.jobs {
		if failed == nil {
			failed = s.await(j.end)
		}
		if failed == nil {
			failed = s.writeSync(j.b)
		}
		j.done <- failed
	}
}

// await waits until the durable Limit allows the file to reach end, or
// the writer is stopped.
func (s *sinkWriter) await(end int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.limit < end && s.stopped == nil {
		s.cond.Wait()
	}
	return s.stopped
}

func (s *sinkWriter) writeSync(b []byte) error {
	if _, err := s.sink.Write(b); err != nil {
		return fmt.Errorf("write output file: %w", err)
	}
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

// write queues b and returns the channel its error arrives on (at once
// when there is nothing to write). b must stay untouched until then.
func (s *sinkWriter) write(b []byte) chan error {
	done := make(chan error, 1)
	if len(b) == 0 || s.jobs == nil {
		done <- nil
		return done
	}
	s.end += int64(len(b))
	s.jobs <- sinkJob{b: b, end: s.end, done: done}
	return done
}

// setLimit records a durable Limit.
func (s *sinkWriter) setLimit(limit int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if limit > s.limit {
		s.limit = limit
		s.cond.Broadcast()
	}
}

// stop makes a waiting write, and every later one, fail with err.
func (s *sinkWriter) stop(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped == nil {
		s.stopped = err
		s.cond.Broadcast()
	}
}

// close ends the writer's goroutine once the queued writes are done.
func (s *sinkWriter) close() {
	if s.jobs != nil {
		close(s.jobs)
	}
}
