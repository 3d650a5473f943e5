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
//
// A name is held by one open Consumer at a time: a second
// Processor.Consumer with the same name fails with ErrConsumerBusy until
// the first is closed, so that two readers cannot move one position
// back and forth.
type Consumer struct {
	p      *Processor
	name   string
	next   uint64
	closed bool
}

// Consumer returns the named consumer, positioned after the last record it
// committed (at record 1 for a new name). The name is held until the
// consumer is closed (Consumer.Close, or Close of the processor).
func (p *Processor) Consumer(name string) (*Consumer, error) {
	if name == "" {
		return nil, errors.New("consumer name is empty")
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if err := p.holdConsumer(name); err != nil {
		return nil, err
	}
	c := &Consumer{p: p, name: name, next: 1}
	err := p.db.View(func(tx *bolt.Tx) (err error) {
		c.next, _, err = readConsumer(tx, name)
		return err
	})
	if err != nil {
		p.releaseConsumer(name)
		return nil, fmt.Errorf("consumer %s: %w", name, err)
	}
	return c, nil
}

// holdConsumer marks name as open, or fails with ErrConsumerBusy.
func (p *Processor) holdConsumer(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.consumers[name] {
		return fmt.Errorf("%w: %s", ErrConsumerBusy, name)
	}
	if p.consumers == nil {
		p.consumers = map[string]bool{}
	}
	p.consumers[name] = true
	return nil
}

func (p *Processor) releaseConsumer(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.consumers, name)
}

// consumerPosition reads a consumer's committed position: the sequence
// number of the first record it has not committed (1 when it has none).
func consumerPosition(tx *bolt.Tx, name string) (uint64, error) {
	next, _, err := readConsumer(tx, name)
	return next, err
}

// Name returns the consumer's name.
func (c *Consumer) Name() string { return c.name }

// Position returns the sequence number of the next record the consumer
// will read.
func (c *Consumer) Position() uint64 { return c.next }

// Records yields records from the consumer's position on, blocking for new
// ones as Processor.Output does; the position advances as records are
// yielded, but is durable only once committed. After Close it yields
// ErrClosed.
func (c *Consumer) Records(ctx context.Context) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		if c.closed {
			yield(Record{}, ErrClosed)
			return
		}
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
// been handled; after a restart the consumer resumes at seq+1. seq must be
// a committed record (1 to OutputEnd()-1; ErrCommitRange otherwise) and
// not below the last one committed (ErrCommitBackwards); committing the
// same record again is harmless. Commit does not move the position that
// Records and Next read from.
func (c *Consumer) Commit(ctx context.Context, seq uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.closed {
		return ErrClosed
	}
	p := c.p
	if err := p.enter(); err != nil {
		return err
	}
	defer p.leave()
	if end := p.OutputEnd(); seq == 0 || seq >= end {
		return fmt.Errorf("%w: consumer %s cannot commit record %d: the committed output is records 1 to %d",
			ErrCommitRange, c.name, seq, end-1)
	}
	var backwards error
	err := p.db.Update(func(tx *bolt.Tx) error {
		prev, err := consumerPosition(tx, c.name)
		if err != nil {
			return err
		}
		if seq+1 < prev {
			backwards = fmt.Errorf("%w: consumer %s has committed record %d, so it cannot commit %d",
				ErrCommitBackwards, c.name, prev-1, seq)
			return backwards
		}
		return tx.Bucket(store.BucketConsumers).Put([]byte(c.name), consumerValue(c.name, seq+1))
	})
	switch {
	case backwards != nil:
		return backwards
	case err != nil:
		return fmt.Errorf("commit consumer %s at %d: %w", c.name, seq, err)
	}
	return nil
}

// Close releases the consumer's name, so that Processor.Consumer may open
// it again; its committed position stays. Later calls return ErrClosed.
// Closing twice is harmless.
func (c *Consumer) Close() error {
	if !c.closed {
		c.closed = true
		c.p.releaseConsumer(c.name)
	}
	return nil
}
