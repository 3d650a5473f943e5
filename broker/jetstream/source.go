package jetstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// SourceOptions configure a Source.
type SourceOptions struct {
	Config
	// Stream is the input stream; Subject, optional, filters it.
	Stream, Subject string
	// Format is the encoding of message values.
	Format cdc.Format
	// AllowGap goes on from the stream's first message (or its end)
	// where the committed sequence is no longer in it, instead of failing
	// with a *broker.PositionError.
	AllowGap bool
	// StallTimeout is how long the ordered consumer may deliver nothing
	// while the stream holds messages past the last one delivered before
	// the source replaces it with a new one (see Source); 0 means
	// DefaultStallTimeout.
	StallTimeout time.Duration
}

// DefaultStallTimeout is SourceOptions.StallTimeout's default: three of
// the ordered consumer's heartbeat intervals (5 s each), so that the
// consumer's own recovery (a reset after two missed heartbeats) has its
// chance first.
const DefaultStallTimeout = 15 * time.Second

// bufferMessages is how many delivered messages wait for Read.
const bufferMessages = 4096

// gapCheckEvery bounds how often a jump in stream sequences (normal with
// a subject filter) is checked against the stream's first sequence.
const gapCheckEvery = time.Second

// Source reads a JetStream stream by stream sequence through an ordered
// consumer (no durable consumer, no acknowledgements). It implements
// recovery.Source.
//
// A watchdog keeps it reading: when the consumer has delivered nothing
// for StallTimeout while the stream holds a message at or past the
// sequence after the last one delivered, the source stops that consumer
// and starts a new one at that sequence, logging it at Warn. (nats.go's
// ordered consumer can stop delivering without an error after a server
// dies; see watchdog.go.)
type Source struct {
	o       SourceOptions
	log     *slog.Logger
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  jetstream.Stream
	created int64

	msgs chan jetstream.Msg
	d    delivery
	// stop ends the watchdog and the calls it makes; watched is closed
	// when it has returned.
	stop    context.CancelFunc
	watched chan struct{}

	// Owned by Read.
	next      uint64
	parts     []broker.Part
	pending   jetstream.Msg // a message cut by b.Max
	seq       uint64        // its stream sequence
	taken     int
	lastCheck time.Time

	mu     sync.Mutex
	cons   jetstream.Consumer // the current consumer
	cc     jetstream.ConsumeContext
	end    uint64 // the stream sequence after its last message, as last seen (0: unknown)
	failed error
	wake   chan struct{} // closed on failure
	closed chan struct{}
	once   sync.Once
}

// NewSource returns a Source; Start connects it.
func NewSource(o SourceOptions) *Source {
	return &Source{o: o, log: o.logger(), msgs: make(chan jetstream.Msg, bufferMessages),
		wake: make(chan struct{}), closed: make(chan struct{})}
}

// Name returns "nats:STREAM" or "nats:STREAM/SUBJECT".
func (s *Source) Name() string {
	if s.o.Subject != "" {
		return "nats:" + s.o.Stream + "/" + s.o.Subject
	}
	return "nats:" + s.o.Stream
}

// Start checks the committed cursor against the stream and starts an
// ordered consumer at the committed sequence (the stream's first message
// when there is none).
func (s *Source) Start(ctx context.Context, cursor []byte) error {
	nc, js, err := s.o.connect()
	if err != nil {
		return err
	}
	s.nc, s.js = nc, js
	if s.stream, err = js.Stream(ctx, s.o.Stream); err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("%s: the stream does not exist", s.Name())
		}
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	info := s.stream.CachedInfo()
	s.created = info.Created.UnixNano()
	if s.next, err = s.startAt(info, cursor); err != nil {
		return err
	}
	if s.o.Subject == "" {
		s.mu.Lock()
		s.end = info.State.LastSeq + 1
		s.mu.Unlock()
	}
	gen := s.d.begin(s.next)
	cons, cc, err := s.consume(ctx, s.next, gen)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.cons, s.cc = cons, cc
	s.mu.Unlock()
	s.startWatch()
	return nil
}

// startWatch runs the watchdog (see watchdog.go) until Close.
func (s *Source) startWatch() {
	ctx, stop := context.WithCancel(context.Background())
	s.stop, s.watched = stop, make(chan struct{})
	go func() {
		defer close(s.watched)
		s.watch(ctx)
	}()
}

// consume starts an ordered consumer at stream sequence from whose
// messages go to Read's buffer as generation gen's (see delivery).
func (s *Source) consume(ctx context.Context, from uint64, gen uint64) (jetstream.Consumer, jetstream.ConsumeContext, error) {
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from}
	if s.o.Subject != "" {
		cfg.FilterSubjects = []string{s.o.Subject}
	}
	cons, err := s.js.OrderedConsumer(ctx, s.o.Stream, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: consumer: %w", s.Name(), err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		s.d.hand(gen, m, s.msgs, s.closed)
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			s.fail(&broker.PositionError{Input: s.Name(), Position: -1, Start: -1, End: -1, Err: broker.ErrBackwards, Detail: "the stream was deleted"})
			return
		}
		s.log.Warn("jetstream source: consumer error", "stream", s.o.Stream, "err", err, "last_delivered", s.d.last())
	}))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: consume: %w", s.Name(), err)
	}
	return cons, cc, nil
}

// startAt returns the sequence to start at, checking the cursor.
func (s *Source) startAt(info *jetstream.StreamInfo, cursor []byte) (uint64, error) {
	first, last := info.State.FirstSeq, info.State.LastSeq
	if len(cursor) == 0 {
		return max(first, 1), nil
	}
	cur, err := DecodeCursor(cursor)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.Name(), err)
	}
	perr := &broker.PositionError{Input: s.Name(), Position: int64(cur.Next), Start: int64(first), End: int64(last + 1)}
	switch {
	case cur.Created != s.created:
		perr.Err, perr.Detail = broker.ErrBackwards, fmt.Sprintf("the stream was deleted and created anew (created %s, the cursor's %s)",
			time.Unix(0, s.created).UTC().Format(time.RFC3339Nano), time.Unix(0, cur.Created).UTC().Format(time.RFC3339Nano))
		if !s.o.AllowGap {
			return 0, perr
		}
		s.log.Warn("jetstream source: reading the re-created stream from its start", "err", perr)
		return max(first, 1), nil
	case cur.Next < first:
		perr.Err = broker.ErrGap
		if !s.o.AllowGap {
			return 0, perr
		}
		s.log.Warn("jetstream source: skipping deleted messages", "err", perr)
		return first, nil
	case cur.Next > last+1:
		perr.Err = broker.ErrBackwards
		if !s.o.AllowGap {
			return 0, perr
		}
		s.log.Warn("jetstream source: going on from the stream's end", "err", perr)
		return last + 1, nil
	}
	return cur.Next, nil
}

// Read fills b with the next messages, blocking only while it holds none.
func (s *Source) Read(ctx context.Context, b *recovery.SourceBatch) error {
	err := s.read(ctx, b)
	b.Cursor = Cursor{Created: s.created, Next: s.next}.Encode()
	return err
}

func (s *Source) read(ctx context.Context, b *recovery.SourceBatch) error {
	for b.Len() < b.Max {
		if s.pending != nil {
			if err := s.take(b); err != nil {
				return err
			}
			continue
		}
		var m jetstream.Msg
		if b.Len() > 0 {
			select {
			case m = <-s.msgs:
			default:
				return nil // nothing more at once
			}
		} else {
			select {
			case m = <-s.msgs:
			case <-ctx.Done():
				return ctx.Err()
			case <-s.wake:
				return s.failure()
			}
		}
		if err := s.accept(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// accept checks m's sequence against the position and makes it the
// message being taken.
func (s *Source) accept(ctx context.Context, m jetstream.Msg) error {
	md, err := m.Metadata()
	if err != nil {
		return fmt.Errorf("%s: message metadata: %w", s.Name(), err)
	}
	seq := md.Sequence.Stream
	switch {
	case seq < s.next:
		perr := &broker.PositionError{Input: s.Name(), Position: int64(s.next), Start: -1, End: -1, Err: broker.ErrBackwards,
			Detail: fmt.Sprintf("the stream delivered sequence %d after %d (was it re-created?)", seq, s.next-1)}
		if !s.o.AllowGap {
			return perr
		}
		s.log.Warn("jetstream source: going on after the stream went back", "err", perr)
	case seq > s.next && time.Since(s.lastCheck) >= gapCheckEvery:
		s.lastCheck = time.Now()
		if err := s.checkGap(ctx, seq); err != nil {
			return err
		}
	}
	s.pending, s.seq, s.taken = m, seq, 0
	s.parts = broker.DecodeValue(s.o.Format, m.Data(), s.parts[:0])
	if s.o.Subject == "" {
		// Unfiltered, the messages pending after this one are the
		// stream's next sequences (less any deleted from the middle).
		s.mu.Lock()
		s.end = seq + 1 + md.NumPending
		s.mu.Unlock()
	}
	return nil
}

// LogEnds returns the stream sequence after its last message as the
// latest message read reported it (its pending count), or as the stream's
// state said at Start, under partition 0: a JetStream stream has one
// order. It is empty with a subject filter, whose pending count says
// nothing of sequences. Safe from any goroutine.
func (s *Source) LogEnds() map[int32]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.end == 0 {
		return nil
	}
	return map[int32]int64{0: int64(s.end)}
}

// checkGap fails when messages between the position and seq were
// deleted by the stream's limits before they were read. With a subject
// filter a jump is normal; it is a gap only when the stream's first
// sequence passed the position.
func (s *Source) checkGap(ctx context.Context, seq uint64) error {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return nil // the check is best effort; the next jump checks again
	}
	if first := info.State.FirstSeq; first > s.next {
		perr := &broker.PositionError{Input: s.Name(), Position: int64(s.next), Start: int64(first), End: int64(info.State.LastSeq + 1), Err: broker.ErrGap}
		if !s.o.AllowGap {
			return perr
		}
		s.log.Warn("jetstream source: skipping deleted messages", "err", perr)
	}
	return nil
}

// take moves the pending message's parts into b; the position passes
// the message once all its parts are taken.
func (s *Source) take(b *recovery.SourceBatch) error {
	seq := s.seq
	n, err := broker.Fill(b, s.parts[s.taken:], cdc.Pos{Source: s.Name(), Offset: int64(seq)})
	s.taken += n
	if s.taken < len(s.parts) {
		s.next = seq
		return err
	}
	s.next, s.pending = seq+1, nil
	return err
}

// fail records an error that stops the source and wakes a blocked Read.
func (s *Source) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = err
		close(s.wake)
	}
}

func (s *Source) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// stopWait bounds how long Close waits for the consumer to stop before it
// closes the connection, which ends the consumer too.
const stopWait = time.Second

// Close stops the watchdog and the consumer and closes the connection.
func (s *Source) Close() error {
	s.once.Do(func() { close(s.closed) }) // unblocks a handler on a full buffer
	if s.stop != nil {
		s.stop()
		<-s.watched
	}
	s.mu.Lock()
	cc := s.cc
	s.mu.Unlock()
	if cc != nil {
		stopped := make(chan struct{})
		go func() { cc.Stop(); close(stopped) }()
		select { // a consumer stuck re-creating itself stops late (see retire)
		case <-stopped:
		case <-time.After(stopWait):
		}
	}
	if s.nc != nil {
		s.nc.Close()
	}
	return nil
}

var _ recovery.Source = (*Source)(nil)
