package relay

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/recovery"
)

// SinkOptions configure a Sink.
type SinkOptions struct {
	// Name names the output in the database: the sink's position is
	// recorded under SinkCursor(Name). Use the Endpoint's Name
	// ("kafka:TOPIC", "nats:STREAM/SUBJECT"), which does not depend on the
	// servers; empty means the Output's Name.
	Name string
	// SinkID is recorded with the position, for people.
	SinkID string
	// Forwarder configures the forwarder; its DatabaseID defaults to the
	// processor's.
	Forwarder broker.ForwarderOptions
	// RecordEvery is how often the position is recorded when it moved;
	// zero means DefaultRecordEvery.
	RecordEvery time.Duration
}

// Sink forwards a processor's output log to a broker output, beside
// whatever writes to the processor, and records how far the output is in
// the database. Run starts and stops it; Publish drains one.
type Sink struct {
	p   *recovery.Processor
	f   *broker.Forwarder
	o   SinkOptions
	log *slog.Logger

	// hold is the sink's consumer of the output log, named as its
	// cursor: it keeps gc's retention from dropping a record the output
	// lacks, and shows the sink's lag in 'cdclog inspect consumers'.
	hold *recovery.Consumer
	held uint64 // the record hold last committed (one before the output's last)

	cancel   context.CancelFunc
	stopped  chan struct{} // closed when the forwarder returned
	err      error         // its error, once stopped
	recorded chan struct{} // closed when the recorder returned
	once     sync.Once
}

// NewSink returns a Sink of p's output log to out, not yet running.
func NewSink(p *recovery.Processor, out broker.Output, o SinkOptions) *Sink {
	if o.Name == "" {
		o.Name = out.Name()
	}
	if o.RecordEvery <= 0 {
		o.RecordEvery = DefaultRecordEvery
	}
	if o.Forwarder.DatabaseID == "" {
		o.Forwarder.DatabaseID = p.DatabaseID()
	}
	log := o.Forwarder.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Sink{p: p, f: broker.NewForwarder(p, out, o.Forwarder), o: o, log: log,
		stopped: make(chan struct{}), recorded: make(chan struct{})}
}

// Forwarder returns the sink's forwarder: its Acked and Lag say how far
// the output is.
func (s *Sink) Forwarder() *broker.Forwarder { return s.f }

// Name returns the name the sink's position is recorded under, less the
// prefix: SinkOptions.Name.
func (s *Sink) Name() string { return s.o.Name }

// start runs the forwarder until stop, with run (Forwarder.Run or
// Drain), and the recorder beside it.
func (s *Sink) start(run func(*broker.Forwarder, context.Context) error) {
	hold, err := s.p.Consumer(SinkCursor(s.o.Name))
	if err != nil {
		s.log.Warn("relay: the sink is not registered as a consumer: gc's retention may drop records it lacks",
			"output", s.o.Name, "err", err)
	}
	s.hold = hold
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		defer close(s.stopped)
		s.err = run(s.f, ctx)
	}()
	go func() {
		defer close(s.recorded)
		s.recordLoop(ctx)
	}()
}

// Stopped is closed once the forwarder has returned: when stop was
// called, or by itself on an error it does not retry (Err says which).
func (s *Sink) Stopped() <-chan struct{} { return s.stopped }

// Err returns the forwarder's error once Stopped is closed: nil when it
// was stopped, or when a Drain completed.
func (s *Sink) Err() error {
	select {
	case <-s.stopped:
		if errors.Is(s.err, context.Canceled) {
			return nil
		}
		return s.err
	default:
		return nil
	}
}

// CatchUp waits until the output holds every record committed so far,
// the forwarder stops (returning its error, or nil), or ctx ends
// (returning ctx's error).
func (s *Sink) CatchUp(ctx context.Context) error {
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- s.f.WaitLag(wctx, 0) }()
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		return ctx.Err()
	case <-s.stopped:
		if s.f.Lag() == 0 {
			return nil
		}
		return s.Err()
	}
}

// stop stops the forwarder, records its position and returns its error
// (see Err).
func (s *Sink) stop() error {
	s.once.Do(func() {
		s.cancel()
		<-s.stopped
		<-s.recorded
		s.recordPosition(context.Background())
		if s.hold != nil {
			s.hold.Close()
		}
	})
	return s.Err()
}

// recordLoop records the position every RecordEvery while it moves.
func (s *Sink) recordLoop(ctx context.Context) {
	t := time.NewTicker(s.o.RecordEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stopped:
			return
		case <-t.C:
			s.recordPosition(ctx)
		}
	}
}

// recordPosition records the forwarder's position if it is known and
// differs from the recorded one.
func (s *Sink) recordPosition(ctx context.Context) {
	acked, known := s.f.Position()
	if !known {
		return
	}
	name := SinkCursor(s.o.Name)
	if s.hold != nil && acked > s.held+1 {
		// What the output holds, but its last record, is what retention
		// may drop for it: a new session reads that one back and compares
		// it with the stored one.
		if err := s.hold.Commit(ctx, acked-1); err != nil {
			s.log.Debug("relay: committing the sink's consumer", "output", s.o.Name, "err", err)
		} else {
			s.held = acked - 1
		}
	}
	if prev, err := DecodeSinkState(s.p.Cursor(name)); err == nil && prev.Acked == acked && prev.Writer == s.f.Writer() {
		return
	}
	b, _ := json.Marshal(SinkState{SinkID: s.o.SinkID, Acked: acked, Writer: s.f.Writer(), At: time.Now().UnixNano()}) // cannot fail
	if err := record(ctx, s.p, name, b); err != nil && ctx.Err() == nil {
		s.log.Debug("relay: recording the sink's position", "output", s.o.Name, "err", err)
	}
}
