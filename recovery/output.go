package recovery

import (
	"context"
	"iter"

	"github.com/cdclog/cdclog/cdc"
	bolt "go.etcd.io/bbolt"
)

// readBatch is how many records one read transaction returns at most.
const readBatch = 4096

// readRecords returns up to limit committed records from seq from on, or
// ErrClosed.
func (p *Processor) readRecords(from uint64, limit int) ([]Record, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	var recs []Record
	err := p.db.View(func(tx *bolt.Tx) error {
		return scanOutput(tx, from, func(seq uint64, m *cdc.Message) (bool, error) {
			recs = append(recs, Record{Seq: seq, Msg: cloneMessage(m)})
			return len(recs) < limit, nil
		})
	})
	return recs, err
}

// OutputEnd returns the sequence number the next output record will get:
// records 1 to OutputEnd()-1 are committed.
func (p *Processor) OutputEnd() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.committed.NextOutput
}

// OutputStart returns the first record the output log holds: 1, unless
// gc's retention dropped the records before it (see Retention).
func (p *Processor) OutputStart() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.committed.outputFrom()
}

// Output yields the committed output records from sequence number from on
// (the first record is 1), then blocks for new ones until ctx ends or the
// processor closes or stops after a failure (then with the error Err
// returns); it then yields that error once and stops. When gc's
// retention has dropped record from (from < OutputStart()), or drops the
// records it is about to read, it yields an *OutputDroppedError
// (ErrOutputDropped), which says where the log now starts.
func (p *Processor) Output(ctx context.Context, from uint64) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		next := max(from, 1)
		for {
			wake, end, failed := p.waitChannel()
			if next < end {
				recs, err := p.readRecords(next, readBatch)
				if err != nil {
					yield(Record{}, err)
					return
				}
				for _, r := range recs {
					if r.Seq >= end {
						break // committed after we looked: next round
					}
					if !yield(r, nil) {
						return
					}
					next = r.Seq + 1
				}
				continue
			}
			if wake == nil {
				yield(Record{}, ErrClosed)
				return
			}
			if failed != nil {
				// The processor stopped: no record will follow.
				yield(Record{}, failed)
				return
			}
			select {
			case <-wake:
			case <-ctx.Done():
				yield(Record{}, ctx.Err())
				return
			}
		}
	}
}

// waitChannel returns the channel closed at the next commit (nil once
// closed), the output end as of now, and the error that stopped the
// processor, if one did (after which no commit comes).
func (p *Processor) waitChannel() (<-chan struct{}, uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.notify == nil {
		return nil, p.committed.NextOutput, p.failed
	}
	return p.notify, p.committed.NextOutput, p.failed
}
