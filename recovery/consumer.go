package recovery

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// Consumer is a named reader of the output that keeps its position in the
// database: after a restart it resumes after the last record it committed.
// If it commits a record only once it has fully handled it, it handles every
// record exactly once across crashes. A Consumer is not safe for concurrent
// use; different consumers are independent.
type Consumer struct {
	p    *Processor
	name string
	next uint64
}

// Consumer returns the named consumer, positioned after the last record it
// committed (at record 1 for a new name).
func (p *Processor) Consumer(name string) (*Consumer, error) {
	if name == "" {
		return nil, errors.New("consumer name is empty")
	}
	c := &Consumer{p: p, name: name, next: 1}
	err := p.db.View(func(tx *bolt.Tx) (err error) {
		c.next, _, err = readConsumer(tx, name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", name, err)
	}
	return c, nil
}

// Position returns the sequence number of the next record the consumer
// will read.
func (c *Consumer) Position() uint64 { return c.next }

// Records yields records from the consumer's position on, blocking for new
// ones as Processor.Output does; the position advances as records are
// yielded, but is durable only once committed.
func (c *Consumer) Records(ctx context.Context) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for r, err := range c.p.Output(ctx, c.next) {
			if err == nil {
				c.next = r.Seq + 1
			}
			if !yield(r, err) {
				return
			}
		}
	}
}

// Next returns the next record, blocking until one is committed or ctx
// ends.
func (c *Consumer) Next(ctx context.Context) (Record, error) {
	for r, err := range c.Records(ctx) {
		return r, err
	}
	return Record{}, ErrClosed
}

// Commit durably records that every record up to and including seq has
// been handled; after a restart the consumer resumes at seq+1.
func (c *Consumer) Commit(ctx context.Context, seq uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := c.p.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(store.BucketConsumers).Put([]byte(c.name), consumerValue(c.name, seq+1))
	})
	if err != nil {
		return fmt.Errorf("commit consumer %s at %d: %w", c.name, seq, err)
	}
	return nil
}
