package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/store"
	bolt "go.etcd.io/bbolt"
)

// Processor is an open cdclog database with its receiver running. All
// methods are safe for concurrent use.
type Processor struct {
	db   *store.DB
	id   string // the database's id (store.ID)
	opts Options
	log  *slog.Logger

	// Owned by the apply goroutine once started.
	recv *demangle.Receiver
	cp   checkpoint
	// msgpackOut is set when an output is written as msgpack, which
	// cannot carry every data exactly (see push).
	msgpackOut bool

	requests chan *request
	prepared chan *work // from the apply to the prepare goroutine
	commits  chan *work // from the prepare to the commit goroutine
	// works holds the idle ones of a fixed set of batches (see
	// workCount), reused with their buffers.
	works chan *work
	done  chan struct{} // closed when the goroutines have ended

	mu        sync.Mutex
	closed    bool
	inflight  sync.WaitGroup
	committed checkpoint    // as of the last commit
	status    receiverState // receiver facts as of the last commit
	notify    chan struct{} // closed and replaced at each commit
	failed    error
}

// workCount is the number of batches in the pipeline at once: one being
// applied, one being prepared, one committing. The set is fixed, rather
// than grown when a stage lags, so that memory stays what it is after the
// first few batches: a batch created late in a long run, when the stages
// happened to lag, kept its buffers (about 9 MB at the default batch size)
// to the end, and peak memory grew with the length of the stream. A fourth
// batch measured no faster.
const workCount = 3

type request struct {
	Request
	pending *Pending
}

// Open opens (creating if needed) the database at path, recovers the state
// of its last commit, cuts the output sink back to what was committed, and
// starts the processor.
func Open(path string, opts Options) (*Processor, error) {
	o := opts.withDefaults()
	db, err := store.Open(path, store.Options{LockTimeout: o.LockTimeout, NoSync: o.NoSync, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	p, err := start(db, o)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return p, nil
}

func start(db *store.DB, o Options) (*Processor, error) {
	cp, recv, err := recoverState(db, o.Start, o.Logger)
	if err != nil {
		return nil, err
	}
	p := &Processor{
		db: db, opts: o, log: o.Logger, recv: recv, cp: cp,
		requests: make(chan *request, 16),
		prepared: make(chan *work, 1),
		works:    make(chan *work, workCount),
		commits:  make(chan *work, 1),
		done:     make(chan struct{}),
		notify:   make(chan struct{}),
	}
	p.msgpackOut = o.Sink != nil && o.SinkFormat == cdc.Msgpack || o.Live != nil && o.LiveFormat == cdc.Msgpack
	if o.Sink != nil {
		if err := p.recoverSink(); err != nil {
			return nil, err
		}
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := store.EnsureID(tx); err != nil {
			return err
		}
		p.id = store.ID(tx)
		return p.cp.save(tx)
	})
	if err != nil {
		return nil, fmt.Errorf("write checkpoint: %w", err)
	}
	p.committed = p.cp.clone()
	p.status = captureReceiver(recv)
	for range workCount {
		p.works <- &work{}
	}
	applyDone, prepareDone := make(chan struct{}), make(chan struct{})
	go func() { p.applyLoop(); close(applyDone) }()
	go func() { p.prepareLoop(newSinkWriter(o.Sink)); close(prepareDone) }()
	go func() { p.commitLoop(); <-applyDone; <-prepareDone; close(p.done) }()
	return p, nil
}

// Submit queues a request and returns at once; requests are applied in the
// order of Submit calls. Use Pending.Wait for the result.
func (p *Processor) Submit(ctx context.Context, r Request) (*Pending, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	p.inflight.Add(1)
	p.mu.Unlock()
	defer p.inflight.Done()
	req := &request{Request: r, pending: &Pending{done: make(chan struct{})}}
	select {
	case p.requests <- req:
		return req.pending, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Append pushes msgs (pos may be nil) and returns once they are durably
// committed. Under policy Fail, a protocol violation or invalid message
// stops the call: the messages before it are committed and the error (a
// *demangle.ViolationError, or one wrapping demangle.ErrInvalid) is
// returned with Result.Applied set to its index.
func (p *Processor) Append(ctx context.Context, msgs []cdc.Message, pos []cdc.Pos) (Result, error) {
	w, err := p.Submit(ctx, Request{Msgs: msgs, Pos: pos})
	if err != nil {
		return Result{}, err
	}
	return w.Wait(ctx)
}

// Close stops taking requests, finishes and commits every request already
// submitted, and closes the database and the sink. It returns the storage
// error that stopped the processor, if any.
func (p *Processor) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.done
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.inflight.Wait()
	close(p.requests)
	<-p.done
	p.mu.Lock()
	close(p.notify)
	p.notify = nil
	failed := p.failed
	p.mu.Unlock()
	err := p.db.Close()
	if p.opts.Sink != nil {
		err = errors.Join(err, p.opts.Sink.Close())
	}
	if failed != nil {
		return failed
	}
	return err
}

// fail records a fatal storage error.
func (p *Processor) fail(err error) {
	p.mu.Lock()
	if p.failed == nil {
		p.failed = fmt.Errorf("%w: %w", ErrFailed, err)
		p.log.Error("processor stopped: storage failure; reopen the database to recover", "err", err)
	}
	p.mu.Unlock()
}

func (p *Processor) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// DatabaseID returns the database's id: 32 hex characters, stable for the
// life of the file (see store.ID). Broker outputs stamp records with it.
func (p *Processor) DatabaseID() string { return p.id }

// Cursor returns the value last committed for the named producer cursor,
// or nil.
func (p *Processor) Cursor(name string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.committed.Cursors[name]
}
