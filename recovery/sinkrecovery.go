package recovery

import (
	"fmt"

	"github.com/cdclog/cdclog/cdc"
	bolt "go.etcd.io/bbolt"
)

// recoverSink reconciles the output file with the checkpoint: bytes past
// the committed size (written before a commit that never happened) are cut;
// a file this database never wrote must be empty, and then receives every
// record committed so far, so that attaching a file late still gives the
// whole clean stream.
func (p *Processor) recoverSink() error {
	s := p.opts.Sink
	size, err := s.Size()
	if err != nil {
		return fmt.Errorf("output file: %w", err)
	}
	cs := &p.cp.Sink
	format := p.opts.SinkFormat.String()
	if cs.Name != "" && cs.Name == p.opts.SinkName {
		if cs.Format != format && cs.Size > 0 {
			return fmt.Errorf("output file %s was written as %s, not %s", cs.Name, cs.Format, format)
		}
		switch {
		case size < cs.Size:
			return fmt.Errorf("%w: %s has %d bytes, %d were committed; restore it, or regenerate it with 'cdclog replay'", ErrSinkShort, cs.Name, size, cs.Size)
		case size > cs.Size:
			p.log.Info("cutting uncommitted output", "file", cs.Name, "bytes", size-cs.Size)
			if err := s.Truncate(cs.Size); err != nil {
				return fmt.Errorf("cut output file back to %d bytes: %w", cs.Size, err)
			}
		}
	} else {
		if size != 0 {
			return fmt.Errorf("%w: %s has %d bytes", ErrSinkForeign, p.opts.SinkName, size)
		}
		// Commit the switch before writing, so that a crash during the
		// catch-up finds a file this database owns.
		*cs = sinkState{Name: p.opts.SinkName, Format: format, Next: 1}
		if err := p.db.Update(func(tx *bolt.Tx) error { return p.cp.save(tx) }); err != nil {
			return fmt.Errorf("write checkpoint: %w", err)
		}
	}
	cs.Format = format
	return p.catchUpSink()
}

// catchUpSink writes the committed records the file lacks.
func (p *Processor) catchUpSink() error {
	cs := &p.cp.Sink
	if cs.Next >= p.cp.NextOutput {
		return nil
	}
	var buf []byte
	flush := func() error {
		if _, err := p.opts.Sink.Write(buf); err != nil {
			return fmt.Errorf("write output file: %w", err)
		}
		cs.Size += int64(len(buf))
		buf = buf[:0]
		return nil
	}
	err := p.db.View(func(tx *bolt.Tx) error {
		return scanOutput(tx, cs.Next, func(seq uint64, m *cdc.Message) (bool, error) {
			if seq >= p.cp.NextOutput {
				return false, nil
			}
			var err error
			if buf, err = cdc.AppendMessage(buf, p.opts.SinkFormat, m); err != nil {
				return false, fmt.Errorf("output record %d: %w", seq, err)
			}
			cs.Next = seq + 1
			if len(buf) >= 1<<20 {
				return true, flush()
			}
			return true, nil
		})
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = p.opts.Sink.Sync()
	}
	if err != nil {
		return fmt.Errorf("catch up output file: %w", err)
	}
	p.log.Info("output file caught up with the committed output", "file", cs.Name, "records", cs.Next-1)
	return nil
}
