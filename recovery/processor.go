package recovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/store"
	"github.com/cdclog/cdclog/wal"
	bolt "go.etcd.io/bbolt"
)

// Processor is an open cdclog database with its receiver running. All
// methods are safe for concurrent use.
type Processor struct {
	db   *store.DB
	id   string // the database's id (store.ID)
	opts Options
	log  *slog.Logger

	// resumed is closed once the apply goroutine has committed the
	// release owed at the open, if any.
	resumed chan struct{}

	// Owned by the apply goroutine once started.
	recv *demangle.Receiver
	cp   checkpoint
	// pending keeps what the receiver holds beyond its horizon: the WAL
	// (see walstore.go).
	pending *walStore
	// quarantined holds the digests of the quarantined rejects, once a
	// run quarantines anything (see quarantinedBefore in quarantine.go).
	quarantined map[rejectDigest]struct{}
	// msgpackOut is set when an output is written as msgpack, which
	// cannot carry every data exactly (see push).
	msgpackOut bool

	// sinkTail is the output file's last bytes, as recovered at Open;
	// the commit goroutine then keeps its own.
	sinkTail tailWindow
	// sinkw writes the output file; fail stops it.
	sinkw *sinkWriter

	requests chan *request
	prepared chan *work // from the apply to the prepare goroutine
	commits  chan *work // from the prepare to the commit goroutine
	// maint carries the writes besides the batches' (consumer positions,
	// gc) to the commit goroutine, the database's one writer.
	maint chan *maintenance
	// works holds the idle ones of a fixed set of batches (see
	// workCount), reused with their buffers.
	works chan *work
	done  chan struct{} // closed when the goroutines have ended

	// closing is closed when Close begins, and stopped when the
	// processor fails: Ingest stops reading.
	closing chan struct{}
	stopped chan struct{}

	mu     sync.Mutex
	closed bool
	// inflight counts the calls using the database (see enter), which
	// Close waits for before closing it.
	inflight  sync.WaitGroup
	consumers map[string]bool // the names of the open Consumers
	committed checkpoint      // as of the last commit
	status    receiverState   // receiver facts as of the last commit
	// walStats are the WAL's figures as of the last commit, kept up to
	// date by the commit goroutine (see commitState.wal), so that Status
	// never walks the WAL's index.
	walStats wal.Stats
	notify   chan struct{} // closed and replaced at each commit
	failed   error
	liveNext uint64 // the first record not yet written to Options.Live
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
	// next is the first message not applied yet, and sofar the results of
	// the batches that applied those before it, when a batch's output
	// grew past its bound in the middle of the request (see apply): the
	// rest of it goes in the next batch.
	next  int
	sofar Result
	// nextReject is the first of the Rejects not set aside yet: each is
	// set aside just before the message its Index names (see applyMsgs).
	nextReject int
	// stopped is the error that stopped the request while the release it
	// caused was still going out: it is delivered with the release's last
	// part (see applyMsgs).
	stopped error
}

// Open opens (creating if needed, unless Options.NoCreate) the database at path, recovers the state
// of its last commit, cuts the output sink back to what was committed, and
// starts the processor. Options that Validate refuses are its
// *cdc.OptionError, returned before the database is opened.
func Open(path string, opts Options) (*Processor, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	db, err := store.Open(path, store.Options{LockTimeout: o.LockTimeout, NoSync: o.NoSync, Logger: o.Logger, NoCreate: o.NoCreate})
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
	cp, recv, pending, err := recoverState(db, o)
	if err != nil {
		return nil, err
	}
	// A release larger than a batch's output bound goes out in parts,
	// batch after batch (see continueRelease).
	recv.SetOutputLimit(2*o.BatchMessages, 2*o.BatchBytes)
	p := &Processor{
		db: db, opts: o, log: o.Logger, recv: recv, cp: cp, pending: pending,
		requests: make(chan *request, 16),
		prepared: make(chan *work, 1),
		works:    make(chan *work, workCount),
		commits:  make(chan *work, 1),
		maint:    make(chan *maintenance),
		done:     make(chan struct{}),
		notify:   make(chan struct{}),
		closing:  make(chan struct{}),
		stopped:  make(chan struct{}),
		resumed:  make(chan struct{}),
	}
	p.msgpackOut = o.Sink != nil && o.SinkFormat == cdc.Msgpack || o.Live != nil && o.LiveFormat == cdc.Msgpack
	if o.Sink != nil {
		if err := p.recoverSink(); err != nil {
			return nil, err
		}
		p.cp.Sink.Limit = p.cp.Sink.Size + sinkAllowance
		p.sinkTail.stamp(&p.cp.Sink)
	}
	if o.Live != nil {
		if err := p.catchUpLive(); err != nil {
			return nil, err
		}
	} else {
		p.cp.LiveNext = p.cp.NextOutput
	}
	p.liveNext = p.cp.LiveNext
	p.pending.source = p.cp.sourceName // the apply goroutine's checkpoint from now on
	if err := p.shedIfNeeded(); err != nil {
		return nil, err
	}
	p.stampPending(&p.cp)
	// The WAL's figures, which the commit goroutine keeps from now on:
	// one walk of its index, each record verified.
	var walStats wal.Stats
	if err := db.View(func(tx *bolt.Tx) (err error) { walStats, err = readWALStats(db, tx); return err }); err != nil {
		return nil, fmt.Errorf("read the WAL's statistics: %w", err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := store.EnsureID(tx); err != nil {
			return err
		}
		if err := ensureSpansFrom(tx, p.cp.NextChunk); err != nil {
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
	p.walStats = walStats
	for range workCount {
		p.works <- &work{}
	}
	p.sinkw = newSinkWriter(o.Sink, markOf(&p.cp.Sink, &p.sinkTail))
	p.sinkw.failed = p.fail
	if o.Observer != nil {
		p.sinkw.synced = o.Observer.OutputSynced
	}
	st := commitState{nextChunk: p.cp.NextChunk,
		liveNext: p.cp.LiveNext, walFloor: p.cp.WALFloor, outputFloor: p.cp.OutputFloor, wal: walStats}
	applyDone, prepareDone := make(chan struct{}), make(chan struct{})
	go func() { p.applyLoop(); close(applyDone) }()
	go func() { p.prepareLoop(); close(prepareDone) }()
	go func() { p.commitLoop(st); <-applyDone; <-prepareDone; close(p.done) }()
	// A release a crash interrupted goes on at once (see applyLoop), and
	// Open returns once it is committed, so that an open processor's
	// output is, as ever, that of the messages it acknowledged. Should it
	// fail, the processor has stopped: its methods say so (Err).
	<-p.resumed
	return p, nil
}

// Submit queues a request and returns at once; requests are applied in the
// order of Submit calls. Use Pending.Wait for the result. When ctx has
// ended before the request is queued, it is not queued: Submit returns
// ctx's error and nothing of the request is applied.
//
// Every update's data is first brought to its canonical encoding (keys
// sorted, no white space, minimal escapes: see cdc.AppendCanonical), as the
// decoders do, so that json.Marshal output and other spellings of one
// value are stored as that value; r.Msgs itself is not modified. Data that
// is not valid JSON fails the whole request with an error wrapping
// ErrInvalidData, under every policy, before anything of it is applied.
func (p *Processor) Submit(ctx context.Context, r Request) (*Pending, error) {
	msgs, err := canonicalData(r.Msgs, r.Pos)
	if err != nil {
		return nil, err
	}
	r.Msgs = msgs
	return p.submit(ctx, r)
}

// submit is Submit for messages whose data is known to be canonical, such
// as a cdc.Reader's (Processor.Ingest's sources): checking it again costs
// about 20 ns a message (BenchmarkCanonicalData, the generator's objects),
// against about 150 ns a message for the whole of cdclog ingest.
func (p *Processor) submit(ctx context.Context, r Request) (*Pending, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	return p.send(ctx, r)
}

// send queues a request for a caller that has entered (see enter).
func (p *Processor) send(ctx context.Context, r Request) (*Pending, error) {
	return p.sendPending(ctx, r, &Pending{done: make(chan struct{})})
}

// sendPending is send with the request's Pending made by the caller.
func (p *Processor) sendPending(ctx context.Context, r Request, w *Pending) (*Pending, error) {
	// A context that has ended already queues nothing: the select below
	// would pick at random between the queue and ctx.Done.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req := &request{Request: r, pending: w}
	select {
	case p.requests <- req:
		return req.pending, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Append pushes msgs (pos may be nil) and returns once they are durably
// committed. Data is made canonical, or refused, as by Submit. Under
// policy Fail, a protocol violation or invalid message stops the call: the
// messages before it are committed and the error (a
// *demangle.ViolationError, or one wrapping demangle.ErrInvalid) is
// returned with Result.Applied set to its index. A progress statement
// only some of whose claims contradict what is held is the exception: its
// other claims are held and committed with the messages before it
// (Result.Accepted counts it), as the receiver does (see "Violations" in
// package demangle's documentation).
//
// A ctx that has ended before the call applies nothing. One that ends
// while the call waits for the commit does not withdraw the messages,
// which may still be committed: the call returns ctx's error either way,
// and sending the messages again is harmless.
func (p *Processor) Append(ctx context.Context, msgs []cdc.Message, pos []cdc.Pos) (Result, error) {
	w, err := p.Submit(ctx, Request{Msgs: msgs, Pos: pos})
	if err != nil {
		return Result{}, err
	}
	return w.Wait(ctx)
}

// Close stops taking requests, stops every running Ingest (each commits
// what it has read, as when its context ends), finishes and commits every
// request already submitted, and closes the database and the sink. It
// returns the storage error that stopped the processor, if any.
func (p *Processor) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.done
		return nil
	}
	p.closed = true
	close(p.closing)
	p.mu.Unlock()
	p.inflight.Wait()
	close(p.requests)
	<-p.done
	if err := p.sinkw.close(); err != nil {
		p.fail(err)
	}
	p.mu.Lock()
	close(p.notify)
	p.notify = nil
	failed := p.failed
	p.mu.Unlock()
	var err error
	if failed == nil {
		err = p.saveOnClose()
	}
	err = errors.Join(err, p.db.Close())
	if p.opts.Sink != nil {
		err = errors.Join(err, p.opts.Sink.Close())
	}
	if failed != nil {
		return failed
	}
	return err
}

// enter registers a call that uses the database or the pipeline: it
// returns ErrClosed once Close has begun, and otherwise Close waits for
// the call to leave before closing the database.
func (p *Processor) enter() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	p.inflight.Add(1)
	return nil
}

// leave ends a call registered by enter.
func (p *Processor) leave() { p.inflight.Done() }

// fail records a fatal error: a storage failure, or a failed write to
// the live stream (ErrLiveOutput), which is not one.
func (p *Processor) fail(err error) {
	p.mu.Lock()
	first := p.failed == nil
	switch {
	case !first:
	case errors.Is(err, ErrLiveOutput):
		p.failed = err
		p.log.Error("processor stopped: the output stream failed", "err", err)
	case changedOutside(err):
		// Reopening would refuse the file: the error says what to do.
		p.failed = fmt.Errorf("%w: %w", ErrFailed, err)
		p.log.Error("processor stopped: another program changed the output file", "err", err)
	default:
		p.failed = fmt.Errorf("%w: %w", ErrFailed, err)
		p.log.Error("processor stopped: storage failure; reopen the database to recover", "err", err)
	}
	failed := p.failed
	if first {
		close(p.stopped)
	}
	if p.notify != nil {
		// Wake the Output readers waiting for a commit that will not
		// come: they yield the failure (see waitChannel).
		close(p.notify)
		p.notify = make(chan struct{})
	}
	p.mu.Unlock()
	p.sinkw.stop(failed)
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

// Policy returns the processor's policy for bad messages (Options.OnError),
// which a producer applies to input it cannot decode.
func (p *Processor) Policy() cdc.ErrorPolicy { return p.opts.OnError }

// Cursors returns every producer cursor committed so far, as
// Reader.Cursors does; the map is a copy.
func (p *Processor) Cursors() map[string][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.committed.Cursors)
}
