package recovery

import (
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/wal"
)

// accepted is a message the receiver accepted, as the apply goroutine
// hands it to the prepare goroutine for the WAL: the message (owned by its
// request until the request is finished) and where it came from.
type accepted struct {
	m                    *cdc.Message
	source, line, offset uint64
}

// prepareLoop encodes each applied batch for storage while the apply
// goroutine runs the next one and the commit goroutine commits the one
// before: the WAL entries, the output log records and the output bytes,
// which it hands to the sink writer at once, so that the output file is
// written and fsynced while the previous batch commits.
func (p *Processor) prepareLoop(sink *sinkWriter) {
	defer close(p.commits)
	defer sink.close()
	for w := range p.prepared {
		if p.failure() == nil {
			p.encodeWAL(w)
			if err := p.render(w); err != nil {
				p.fail(err) // the batch does not commit
			} else {
				w.sinkDone = sink.write(w.sinkBytes)
			}
		}
		p.commits <- w
	}
}

// encodeWAL fills w.wal with the batch's accepted messages, numbered in
// arrival order from w.firstArrival.
func (p *Processor) encodeWAL(w *work) {
	for i := range w.accepted {
		a := &w.accepted[i]
		w.wal.AddFunc(wal.Entry{Time: a.m.Time(), Arrival: w.firstArrival + uint64(i), Source: a.source,
			Line: a.line, Offset: a.offset}, func(dst []byte) []byte { return cdc.AppendBinary(dst, a.m) })
	}
}

// render encodes the batch's output for the output log and the sinks. It
// fails only when a msgpack output cannot carry a record exactly (see
// cdc.ErrMsgpackInexact): push refuses such input, so only data accepted
// by an earlier run without msgpack output can get here.
func (p *Processor) render(w *work) error {
	first := w.cp.NextOutput - uint64(len(w.out))
	for i := range w.out {
		m := &w.out[i]
		w.output.add(m)
		var err error
		if p.opts.Sink != nil {
			w.sinkBytes, err = cdc.AppendMessage(w.sinkBytes, p.opts.SinkFormat, m)
		}
		if p.opts.Live != nil && err == nil {
			w.liveBytes, err = cdc.AppendMessage(w.liveBytes, p.opts.LiveFormat, m)
		}
		if err != nil {
			return fmt.Errorf("output record %d: %w", first+uint64(i), err)
		}
	}
	return nil
}

// sinkWriter writes and fsyncs output bytes on its own goroutine, in the
// order they were handed to it. After an error it writes nothing more and
// reports that error for every later write: bytes written past a failed
// write would leave a gap.
type sinkWriter struct {
	sink Sink
	jobs chan sinkJob
}

type sinkJob struct {
	b    []byte
	done chan error
}

// newSinkWriter starts the writer for sink; a nil sink gives a writer
// that has nothing to write.
func newSinkWriter(sink Sink) *sinkWriter {
	s := &sinkWriter{sink: sink}
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
			failed = s.writeSync(j.b)
		}
		j.done <- failed
	}
}

func (s *sinkWriter) writeSync(b []byte) error {
	if _, err := s.sink.Write(b); err != nil {
		return fmt.Errorf("write output file: %w", err)
	}
	if err := s.sink.Sync(); err != nil {
		return fmt.Errorf("fsync output file: %w", err)
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
	s.jobs <- sinkJob{b: b, done: done}
	return done
}

// close ends the writer's goroutine once the queued writes are done.
func (s *sinkWriter) close() {
	if s.jobs != nil {
		close(s.jobs)
	}
}
