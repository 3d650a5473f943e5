package recovery

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The commit goroutine is the database's one writer while a processor
// runs: besides the batches it runs the other writes (a consumer's
// position, the deletion of a consumer, gc), each in a transaction of its
// own between two batches. So they see the checkpoint of the last commit
// as it is in the database, never race a batch for the checkpoint (whose
// floors the commit goroutine stamps on every batch), and are ordered
// with one another: a consumer cannot seek below the output floor that a
// gc running at the same moment sets.

// maintenance is one such write: fn runs inside the transaction, and
// after, when set, on the commit goroutine once it has committed.
type maintenance struct {
	fn    func(tx *bolt.Tx, st *commitState) error
	after func(st *commitState)
	done  chan error
}

// maintain runs a write on the commit goroutine and returns its error. The
// caller has entered (see enter), so the goroutine runs until the write is
// done. Once handed over, the write runs to its end even if ctx ends.
func (p *Processor) maintain(ctx context.Context, fn func(*bolt.Tx, *commitState) error, after func(*commitState)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m := &maintenance{fn: fn, after: after, done: make(chan error, 1)}
	select {
	case p.maint <- m:
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-m.done
}

// runMaintenance runs m on the commit goroutine. A failed write is
// returned to its caller and does not stop the processor: it changed
// nothing (bbolt rolled it back), and the batches' commits do not depend
// on it.
func (p *Processor) runMaintenance(m *maintenance, st *commitState) error {
	if err := p.failure(); err != nil {
		return err
	}
	if err := p.db.Update(func(tx *bolt.Tx) error { return m.fn(tx, st) }); err != nil {
		return err
	}
	if m.after != nil {
		m.after(st)
	}
	return nil
}

// lastCommitted returns a copy of the checkpoint of the last commit. On
// the commit goroutine it is the checkpoint in the database.
func (p *Processor) lastCommitted() checkpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.committed.clone()
}

// saveCommitted writes cp, the last committed checkpoint changed by a
// maintenance write, and makes it the last committed one once tx
// commits (see publish).
func saveCommitted(tx *bolt.Tx, cp *checkpoint) error {
	if err := cp.save(tx); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

// publish makes cp the last committed checkpoint, after the maintenance
// write that saved it committed.
func (p *Processor) publish(cp checkpoint) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.committed = cp
}
