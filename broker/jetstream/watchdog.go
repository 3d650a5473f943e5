package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/nats-io/nats.go/jetstream"
)

// The watchdog. nats.go's ordered consumer recovers by itself from most
// faults (a reconnect, two missed heartbeats, a deleted consumer: it
// creates a new consumer after the last message it delivered), but not
// from all. When a node dies just as the consumer re-creates itself (on
// a reconnect), the cluster can place the new R1 consumer on the dead
// node; nats.go then retries creating that one name for ever (unlimited
// attempts, 1 s to 10 s apart), which the cluster never grants, holding
// the consumer's lock, so nothing is delivered and no error reaches
// ConsumeErrHandler. (Seen in the integration test that kills the output
// stream's leader, 1 run in 8 to 20, with a goroutine dump: the consumer
// sat in reset's retryWithBackoff for the test's whole two minutes.)
//
// So the source checks for itself: when nothing was delivered for
// StallTimeout while Read's buffer is empty, it asks the stream for its
// last sequence (with a subject filter, the last message on the subject),
// and when that is at or past the sequence after the last message
// delivered, it starts a new ordered consumer there, under a new name,
// and retires the old one. A stream that has nothing more is idle, not
// stalled, and keeps its consumer.
//
// The new consumer starts after the last message handed to Read's buffer,
// so no message is handed on twice or skipped, and the stream identity
// check still holds: a stream found re-created (another creation time)
// fails the source with broker.ErrBackwards.

// replaceTimeout bounds creating a replacement consumer and each of the
// watchdog's stream queries.
const replaceTimeout = 10 * time.Second

// delivery hands the messages of the source's consumers to Read's buffer
// in stream order, across the consumers the watchdog replaces. Each
// consumer is a generation; only the current one's messages are handed
// on. A handler holds mu while it waits for room in the buffer, so that
// a new generation's first message never overtakes its predecessor's
// last. The zero value is ready; begin starts the first generation.
type delivery struct {
	mu   sync.Mutex
	gen  uint64
	next uint64 // the sequence after the last message handed on

	after atomic.Uint64 // next, readable while a handler waits holding mu
	at    atomic.Int64  // when the current generation last delivered or began (Unix ns)
}

// begin starts a new generation at stream sequence from and returns it.
func (d *delivery) begin(from uint64) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next = from
	return d.advance()
}

// renew starts a new generation where the current one stopped: it returns
// the generation and the sequence after the last message handed on. The
// current generation's later messages are dropped.
func (d *delivery) renew() (gen, from uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.advance(), d.next
}

func (d *delivery) advance() uint64 {
	d.gen++
	d.after.Store(d.next)
	d.at.Store(time.Now().UnixNano())
	return d.gen
}

// hand passes m, a message of generation gen's consumer, to buf unless
// gen is no longer current, waiting for room in buf until closed.
func (d *delivery) hand(gen uint64, m jetstream.Msg, buf chan<- jetstream.Msg, closed <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if gen != d.gen {
		return // a replaced consumer's: its successor delivers it again
	}
	d.at.Store(time.Now().UnixNano())
	if md, err := m.Metadata(); err == nil {
		d.next = md.Sequence.Stream + 1
		d.after.Store(d.next)
	} // else Read reports the error
	select {
	case buf <- m:
	case <-closed:
	}
}

// last returns the stream sequence of the last message handed on (the
// start sequence less one before any).
func (d *delivery) last() uint64 { return d.after.Load() - 1 }

// idle returns how long the current generation has delivered nothing.
func (d *delivery) idle() time.Duration { return time.Since(time.Unix(0, d.at.Load())) }

// watch replaces a stalled consumer until ctx ends or the source fails.
func (s *Source) watch(ctx context.Context) {
	stall := s.o.StallTimeout
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	tick := time.NewTicker(max(stall/4, time.Millisecond))
	defer tick.Stop()
	var checked time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if s.failure() != nil {
			return
		}
		// An idle stream is asked about once a StallTimeout.
		if idle := s.d.idle(); idle >= stall && len(s.msgs) == 0 && time.Since(checked) >= stall {
			checked = time.Now()
			s.check(ctx, idle)
		}
	}
}

// check replaces the consumer when the stream holds a message it has not
// delivered.
func (s *Source) check(ctx context.Context, idle time.Duration) {
	qctx, cancel := context.WithTimeout(ctx, replaceTimeout)
	defer cancel()
	from := s.d.after.Load()
	last, err := s.streamLast(qctx)
	var perr *broker.PositionError
	switch {
	case errors.As(err, &perr):
		s.fail(perr)
		return
	case err != nil:
		s.log.Debug("jetstream source: watchdog cannot see the stream", "stream", s.o.Stream, "err", err)
		return
	case last < from:
		return // idle: nothing more to deliver
	}
	s.log.Warn("jetstream source: the consumer delivered nothing while the stream has more; starting a new one",
		"input", s.Name(), "idle", idle.Round(time.Millisecond), "next", from, "stream_last", last)
	s.replace(ctx)
}

// streamLast returns the sequence of the stream's last message (with a
// subject filter, of the subject's last message; 0 when it has none), or a
// *broker.PositionError when the stream was created anew.
func (s *Source) streamLast(ctx context.Context) (uint64, error) {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream info: %w", err)
	}
	if c := info.Created.UnixNano(); c != s.created {
		return 0, &broker.PositionError{Input: s.Name(), Position: int64(s.d.after.Load()), Start: int64(info.State.FirstSeq),
			End: int64(info.State.LastSeq + 1), Err: broker.ErrBackwards, Detail: fmt.Sprintf("the stream was deleted and created anew while it was read (created %s, the one read %s)",
				time.Unix(0, c).UTC().Format(time.RFC3339Nano), time.Unix(0, s.created).UTC().Format(time.RFC3339Nano))}
	}
	if s.o.Subject == "" {
		return info.State.LastSeq, nil
	}
	m, err := s.stream.GetLastMsgForSubject(ctx, s.o.Subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("last message on %s: %w", s.o.Subject, err)
	}
	return m.Sequence, nil
}

// replace starts a new consumer after the last message handed on, in
// place of the current one, which it then retires. When starting fails,
// the next check tries again.
func (s *Source) replace(ctx context.Context) {
	gen, from := s.d.renew()
	s.mu.Lock()
	old, oldcc := s.cons, s.cc
	s.cons, s.cc = nil, nil
	s.mu.Unlock()
	if oldcc != nil {
		go s.retire(old, oldcc)
	}
	cctx, cancel := context.WithTimeout(ctx, replaceTimeout)
	defer cancel()
	cons, cc, err := s.consume(cctx, from, gen)
	if err != nil {
		s.log.Warn("jetstream source: starting a new consumer", "input", s.Name(), "next", from, "err", err)
		return
	}
	s.mu.Lock()
	s.cons, s.cc = cons, cc
	s.mu.Unlock()
}

// retire stops a replaced consumer and deletes it from the server, best
// effort (an ephemeral consumer goes by itself after its inactivity
// threshold). It runs on its own: a consumer stuck re-creating itself
// holds its lock, and Stop waits until its retry loop notices the stop
// (one retry interval, at most nats.go's 10 s back-off and 10 s request).
// Its messages are dropped meanwhile, being of an older generation.
func (s *Source) retire(old jetstream.Consumer, cc jetstream.ConsumeContext) {
	cc.Stop()
	info := old.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), replaceTimeout)
	defer cancel()
	if err := s.js.DeleteConsumer(ctx, s.o.Stream, info.Name); err != nil {
		s.log.Debug("jetstream source: deleting a replaced consumer", "consumer", info.Name, "err", err)
	}
}
