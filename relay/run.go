package relay

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// DefaultDrainTimeout is how long Run waits, once its inputs were stopped,
// for the output to receive what was committed.
const DefaultDrainTimeout = 10 * time.Second

// Run reads inputs into one processor and forwards its output, as
// `cdclog ingest` does: the InTurn inputs one after the other, then the
// Endless ones concurrently (see the package documentation). The zero
// value of each option works.
type Run struct {
	// InTurn inputs are read one after the other, each to its end.
	InTurn []recovery.Source
	// Endless inputs are read concurrently once the InTurn ones are
	// done, each by its own Processor.Ingest, until ctx ends or one
	// fails. Their names must differ.
	Endless []recovery.Source
	// Options returns the options of src's Ingest (src as given in
	// InTurn or Endless); nil means the defaults. For Endless inputs it
	// is called, and its OnRead runs, on goroutines of their own.
	Options func(src recovery.Source) recovery.IngestOptions
	// OnRead, when set, is called with each batch read from src (as
	// given in InTurn or Endless), after Run counted it (Read) and
	// after the OnRead of src's Options; for Endless inputs on their
	// goroutines, concurrently.
	OnRead func(src recovery.Source, b *recovery.SourceBatch)
	// BeforeStart and OnStart, when set, are called with each input (as
	// given) before Processor.Ingest starts it (starting may log) and
	// once it has started, for a progress display (see Offset); with
	// OnRead, on the goroutines of Endless inputs.
	BeforeStart, OnStart func(src recovery.Source)
	// Sink, when set, forwards the output beside the inputs.
	Sink *Sink
	// MaxSinkLag, when positive with a Sink, holds every input back
	// while the output is more than this many records behind
	// (broker.Throttle). The lag is that of committed records, so an
	// input runs on by the reads not yet committed when the output
	// stops: at most about twice IngestOptions.InFlight reads.
	MaxSinkLag uint64
	// DrainTimeout bounds the wait for the Sink once the inputs were
	// stopped rather than ended; zero means DefaultDrainTimeout, a
	// negative value does not wait.
	DrainTimeout time.Duration
	// RecordEvery is how often the inputs' log ends are recorded; zero
	// means DefaultRecordEvery.
	RecordEvery time.Duration
	// Logger receives what Run says; nil means slog.Default().
	Logger *slog.Logger

	read atomic.Uint64 // messages and rejects read, for Read
}

// Read returns how many messages (rejects included) Run has read from
// its inputs so far: safe to call while it runs, for progress.
func (r *Run) Read() uint64 { return r.read.Load() }

// Result is what a Run did.
type Result struct {
	// Read is how many messages, rejects included, were read from the
	// inputs (committed or not).
	Read uint64
	// Committed sums the committed results of every input's Ingest.
	Committed recovery.Result
	// Unsent is how many committed records were not known to be on the
	// output when Run returned (0 without a Sink): the next run, or
	// `cdclog publish`, forwards them.
	Unsent uint64
	// DrainTimedOut is set when Run stopped waiting for the Sink after
	// DrainTimeout.
	DrainTimedOut bool
	// Sink is the Sink's Name ("" without one), and SinkAcked how many
	// records the output had acknowledged when Run returned.
	Sink      string
	SinkAcked uint64
}

// LogAttrs returns the result as log fields, in the order of `cdclog
// ingest`'s summary line: messages (Read), the committed counts
// (recovery.Result.LogAttrs), and with a Sink, sink, sink_acked and
// sink_unsent.
func (res Result) LogAttrs() []slog.Attr {
	attrs := append([]slog.Attr{slog.Uint64("messages", res.Read)}, res.Committed.LogAttrs()...)
	if res.Sink == "" {
		return attrs
	}
	return append(attrs, slog.String("sink", res.Sink), slog.Uint64("sink_acked", res.SinkAcked), slog.Uint64("sink_unsent", res.Unsent))
}

// errSinkStopped stops the inputs when the forwarder stopped by itself.
var errSinkStopped = errors.New("the output sink stopped")

// Run runs the inputs and the sink until the inputs end, ctx ends or
// something fails, then drains the sink. It returns the first error that
// stopped an input (as Processor.Ingest returns it), or the forwarder's
// error when that stopped the inputs, or ctx's error when ctx ended, or
// nil once the inputs ended and the output holds everything. Options that
// Validate refuses are its *cdc.OptionError, before anything is read.
func (r *Run) Run(ctx context.Context, p *recovery.Processor) (Result, error) {
	var res Result
	if err := r.Validate(); err != nil {
		return res, err
	}
	log := r.Logger
	if log == nil {
		log = slog.Default()
	}
	ictx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	if r.Sink != nil {
		r.Sink.start((*broker.Forwarder).Run)
		go func() {
			select {
			case <-r.Sink.Stopped():
				stop(errSinkStopped)
			case <-ictx.Done():
			}
		}()
	}
	ends := newEndRecorder(p, log, append(append([]recovery.Source(nil), r.InTurn...), r.Endless...))
	rctx, stopRecording := context.WithCancel(ictx)
	recDone := ends.every(rctx, r.RecordEvery)
	err := r.ingest(ictx, p, &res.Committed)
	stopRecording()
	<-recDone
	ends.flush(context.Background())
	res.Read = r.Read()
	if r.Sink == nil {
		return res, err
	}
	r.drain(ctx, err, log, &res)
	sinkErr := r.Sink.stop()
	res.Unsent, res.Sink, res.SinkAcked = r.Sink.f.Lag(), r.Sink.Name(), r.Sink.f.Acked()
	if res.Unsent > 0 {
		log.Warn("output sink: committed records are not on the output yet; they stay in the database, and the next ingest with --to, or cdclog publish, forwards them",
			"output", r.Sink.Name(), "unsent", res.Unsent, "acked", r.Sink.f.Acked())
	}
	switch {
	case sinkErr != nil && (err == nil || errors.Is(context.Cause(ictx), errSinkStopped)):
		return res, sinkErr
	case sinkErr != nil:
		log.Error("output sink stopped", "output", r.Sink.Name(), "err", sinkErr)
	}
	return res, err
}

// Validate reports options that Run refuses, as a *cdc.OptionError: a
// MaxSinkLag without a Sink, whose lag would hold nothing back.
func (r *Run) Validate() error {
	if r.MaxSinkLag > 0 && r.Sink == nil {
		return &cdc.OptionError{Option: "--max-sink-lag", Reason: "applies to a broker output, and there is no --to"}
	}
	return nil
}

// drain waits for the sink: until it catches up when the inputs ended,
// for at most DrainTimeout when they stopped (or ctx ends meanwhile).
func (r *Run) drain(ctx context.Context, ingestErr error, log *slog.Logger, res *Result) {
	if ingestErr == nil && r.Sink.CatchUp(ctx) == nil {
		return
	}
	select {
	case <-r.Sink.Stopped():
		return // by itself: nothing more will be forwarded
	default:
	}
	if r.DrainTimeout < 0 {
		return
	}
	timeout := r.DrainTimeout
	if timeout == 0 {
		timeout = DefaultDrainTimeout
	}
	if lag := r.Sink.f.Lag(); lag > 0 {
		log.Info("output sink: forwarding what was committed before stopping", "output", r.Sink.Name(), "records", lag, "timeout", timeout)
	}
	dctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if errors.Is(r.Sink.CatchUp(dctx), context.DeadlineExceeded) {
		res.DrainTimedOut = true
	}
}

// ingest reads the InTurn inputs, then the Endless ones.
func (r *Run) ingest(ctx context.Context, p *recovery.Processor, sum *recovery.Result) error {
	for _, src := range r.InTurn {
		res, err := p.Ingest(ctx, r.wrap(src), r.options(src))
		sum.Add(res.Committed)
		if err != nil {
			return err
		}
	}
	if len(r.Endless) == 0 {
		return nil
	}
	ectx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, src := range r.Endless {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Ingest(ectx, r.wrap(src), r.options(src))
			mu.Lock()
			defer mu.Unlock()
			sum.Add(res.Committed)
			if err != nil && first == nil && ectx.Err() == nil {
				first = err
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// wrap returns src as Ingest reads it: throttled by MaxSinkLag, and
// with the start hooks.
func (r *Run) wrap(src recovery.Source) recovery.Source {
	given := src
	if r.Sink != nil && r.MaxSinkLag > 0 {
		src = broker.Throttle(src, r.Sink.f, r.MaxSinkLag)
	}
	if r.BeforeStart != nil || r.OnStart != nil {
		src = startHooked{Source: src, given: given, r: r}
	}
	return src
}

// options are src's Ingest options, with an OnRead that counts and
// calls r.OnRead.
func (r *Run) options(src recovery.Source) recovery.IngestOptions {
	var o recovery.IngestOptions
	if r.Options != nil {
		o = r.Options(src)
	}
	onRead := o.OnRead
	o.OnRead = func(b *recovery.SourceBatch) {
		r.read.Add(uint64(b.Len()))
		if onRead != nil {
			onRead(b)
		}
		if r.OnRead != nil {
			r.OnRead(src, b)
		}
	}
	return o
}

// every flushes the recorder every d (DefaultRecordEvery when zero) until
// ctx ends; the channel is closed when it has stopped.
func (r *endRecorder) every(ctx context.Context, d time.Duration) <-chan struct{} {
	done := make(chan struct{})
	if d <= 0 {
		d = DefaultRecordEvery
	}
	go func() {
		defer close(done)
		if len(r.srcs) == 0 {
			return
		}
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				r.flush(ctx)
			}
		}
	}()
	return done
}
