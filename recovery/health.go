package recovery

import (
	"fmt"

	"github.com/cdclog/cdclog/cdc"

	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// Err returns nil while the processor runs; once it has stopped, why: the
// error that stopped it (wrapping ErrFailed after a storage failure, or
// ErrLiveOutput), or ErrClosed once Close has begun. A health check reads
// it.
func (p *Processor) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.failed != nil:
		return p.failed
	case p.closed:
		return ErrClosed
	}
	return nil
}

// ConsumerPositions returns the committed position of every consumer that
// has committed one, by name: the sequence number of the next record it
// will read. A consumer's lag is OutputEnd() less its position.
func (p *Processor) ConsumerPositions() (map[string]uint64, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	pos := map[string]uint64{}
	err := p.db.View(func(tx *bolt.Tx) error {
		l, err := readLayout(tx)
		if err != nil {
			return err
		}
		b := tx.Bucket(store.BucketConsumers)
		if b == nil {
			return corruptRecord(store.BucketConsumers, nil, "bucket missing")
		}
		return b.ForEach(func(k, v []byte) error {
			next, _, err := decodeConsumer(&l, k, v)
			pos[string(k)] = next
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read consumer positions: %w", err)
	}
	return pos, nil
}

// Policy returns the processor's policy for bad messages (Options.OnError),
// which a producer applies to input it cannot decode.
func (p *Processor) Policy() cdc.ErrorPolicy { return p.opts.OnError }
