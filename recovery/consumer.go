package recovery

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// Consumer is a named reader of the output that keeps its position in the
// database: after a restart it resumes at the position it last committed
// (Commit) or sought (Seek). A Consumer is not safe for concurrent use;
// different consumers are independent.
//
// A Consumer is at-least-once into anything outside this database: a
// handler that applies a record to its own store and then calls Commit
// applies the record again if the process dies between the two, since
// the two commits are in different databases. It is exactly-once only
// for a handler that is idempotent (applying a record twice is the same
// as once) or that can undo what it did past the committed position on
// restart. The general exactly-once pattern keeps the position in the
// consumer's own store instead: see "Exactly once into your own store" in
// the package documentation.
//
// A consumer is registered from its first Processor.Consumer on: its
// position is stored (at the first record the output log holds), it is
// listed by Processor.Consumers with its lag, and gc's retention keeps
// every record from its position on, until DeleteConsumer removes it.
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

// Consumer returns the named consumer, positioned at its committed
// position; a new name is registered at the first record the output log
// holds (record 1 unless gc's retention dropped output). The name is held
// until the consumer is closed (Consumer.Close, or Close of the
// processor). A name is UTF-8 text with a character other than white
// space and no control characters, since inspect and errors print it.
func (p *Processor) Consumer(name string) (*Consumer, error) {
	if err := checkConsumerName(name); err != nil {
		return nil, err
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if err := p.holdConsumer(name); err != nil {
		return nil, err
	}
	c := &Consumer{p: p, name: name}
	err := p.maintain(context.Background(), func(tx *bolt.Tx, st *commitState) error {
		next, ok, err := readConsumer(tx, name)
		if err != nil || ok {
			c.next = next
			return err
		}
		c.next = max(st.outputFloor, 1)
		return putConsumer(tx, name, c.next)
	}, nil)
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
	return c.write(ctx, fmt.Sprintf("commit consumer %s at %d", c.name, seq), func(tx *bolt.Tx, _ *commitState) error {
		if end := c.p.OutputEnd(); seq == 0 || seq >= end {
			return consumerRefusal{fmt.Errorf("%w: consumer %s cannot commit record %d: the committed output is records 1 to %d",
				ErrCommitRange, c.name, seq, end-1)}
		}
		prev, err := consumerPosition(tx, c.name)
		if err != nil {
			return err
		}
		if seq+1 < prev {
			return consumerRefusal{fmt.Errorf("%w: consumer %s has committed record %d, so it cannot commit %d",
				ErrCommitBackwards, c.name, prev-1, seq)}
		}
		return putConsumer(tx, c.name, seq+1)
	})
}

// Seek durably moves the consumer to seq: Records and Next read from seq
// on, and after a restart the consumer resumes there. Unlike Commit it may
// go back (to handle records again) or forward past records not handled
// (to skip them). seq must lie in the output log: from its first record
// (Processor.OutputStart: 1 unless gc's retention dropped output) to
// OutputEnd(), the record the next commit will release; ErrCommitRange
// otherwise, wrapping an *OutputDroppedError when seq was dropped.
func (c *Consumer) Seek(ctx context.Context, seq uint64) error {
	err := c.write(ctx, fmt.Sprintf("seek consumer %s to %d", c.name, seq), func(tx *bolt.Tx, st *commitState) error {
		first, end := max(st.outputFloor, 1), c.p.OutputEnd()
		switch {
		case seq < first && seq > 0 && first > 1:
			return consumerRefusal{fmt.Errorf("%w: consumer %s cannot seek to record %d: %w", ErrCommitRange, c.name, seq,
				&OutputDroppedError{From: seq, First: first})}
		case seq < first || seq > end:
			return consumerRefusal{fmt.Errorf("%w: consumer %s cannot seek to record %d: the output log holds records %d to %d (seek to %d for the next one)",
				ErrCommitRange, c.name, seq, first, end-1, end)}
		}
		return putConsumer(tx, c.name, seq)
	})
	if err == nil {
		c.next = seq
	}
	return err
}

// consumerRefusal marks an error of a consumer's write that refuses its arguments,
// returned as it is rather than as a failure to write.
type consumerRefusal struct{ error }

// write runs fn, which changes the consumer's position, on the commit
// goroutine (see maintain). A refusal fn returns is returned unwrapped;
// another error is a failure to write, described by what.
func (c *Consumer) write(ctx context.Context, what string, fn func(*bolt.Tx, *commitState) error) error {
	if c.closed {
		return ErrClosed
	}
	if err := c.p.enter(); err != nil {
		return err
	}
	defer c.p.leave()
	err := c.p.maintain(ctx, fn, nil)
	var r consumerRefusal
	switch {
	case errors.As(err, &r):
		return r.error
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
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

// checkConsumerName refuses a name that would print as nothing or as
// something else: empty or all white space, not UTF-8, or holding a
// control character.
func checkConsumerName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("consumer name %q is empty or all white space", name)
	case !utf8.ValidString(name):
		return fmt.Errorf("consumer name %q is not UTF-8 text", name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("consumer name %q holds a control character", name)
	}
	return nil
}
