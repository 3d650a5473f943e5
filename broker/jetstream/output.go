package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultAckTimeout bounds the wait for a publish's acknowledgement.
const DefaultAckTimeout = 30 * time.Second

// OutputOptions configure an Output.
type OutputOptions struct {
	Config
	// Stream is the output stream; Subject the subject published to
	// (empty: the stream's only subject, which must be literal).
	Stream, Subject string
	// SinkID names the sink in each message's Nats-Msg-Id,
	// "<SinkID>:<seq>". Empty means the subject.
	SinkID string
	// AckTimeout bounds the wait for acknowledgements; zero means
	// DefaultAckTimeout.
	AckTimeout time.Duration
}

// Output is a subject of a JetStream stream, as a broker.Output. Every
// publish carries Nats-Expected-Last-Subject-Sequence, the stream
// sequence of the subject's last message as this writer knows it, so the
// stream refuses a message from a writer that is not up to date: of two
// writers, the one that publishes second is refused. Nats-Msg-Id
// "<sink-id>:<seq>" makes a re-sent record a duplicate within the
// stream's duplicate window.
//
// On a stream of one replica, publishes are pipelined: the expected
// sequence of each message of a Write is the previous one's plus one,
// which holds when nothing else is written to the stream. When another
// subject's message comes between, the stream refuses the rest of the
// Write, and the Output publishes one message at a time from then on. A
// replicated stream checks an expected sequence only against what it has
// replicated, so on it the Output publishes one message at a time from
// the start: one round trip and one replicated write per record.
// (nats-server's atomic batch publish would lift that; not used yet.)
type Output struct {
	o OutputOptions
	// serial is set once a pipelined Write met another subject's
	// messages.
	serial atomic.Bool
}

// NewOutput returns an Output.
func NewOutput(o OutputOptions) *Output {
	if o.AckTimeout <= 0 {
		o.AckTimeout = DefaultAckTimeout
	}
	return &Output{o: o}
}

// Name returns "nats:STREAM/SUBJECT".
func (o *Output) Name() string { return "nats:" + o.o.Stream + "/" + o.o.Subject }

// Open connects, checks the stream and reads back the subject's last
// message. JetStream has no producer fencing: a second writer is refused
// by the expected-sequence check instead (see Output).
func (o *Output) Open(ctx context.Context, st broker.Stamp) (broker.Session, broker.Last, error) {
	nc, js, err := o.o.connect()
	if err != nil {
		return nil, broker.Last{}, err
	}
	s, last, err := o.open(ctx, js, st)
	if err != nil {
		nc.Close()
		return nil, broker.Last{}, err
	}
	s.nc = nc
	return s, last, nil
}

func (o *Output) open(ctx context.Context, js jetstream.JetStream, st broker.Stamp) (*session, broker.Last, error) {
	stream, err := js.Stream(ctx, o.o.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, broker.Last{}, fmt.Errorf("%w: nats:%s: the stream does not exist (see docs/brokers.md)", broker.ErrOutputConfig, o.o.Stream)
	}
	if err != nil {
		return nil, broker.Last{}, fmt.Errorf("nats:%s: %w", o.o.Stream, err)
	}
	cfg := stream.CachedInfo().Config
	if o.o.Subject == "" {
		if len(cfg.Subjects) != 1 || !broker.Literal(cfg.Subjects[0]) {
			return nil, broker.Last{}, fmt.Errorf("%w: nats:%s has subjects %q: name the one to publish to (nats://SERVERS/STREAM/SUBJECT)", broker.ErrOutputConfig, o.o.Stream, cfg.Subjects)
		}
		o.o.Subject = cfg.Subjects[0]
	}
	if !broker.Literal(o.o.Subject) {
		return nil, broker.Last{}, fmt.Errorf("%w: %s: cannot publish to a subject with wildcards", broker.ErrOutputConfig, o.Name())
	}
	if o.o.SinkID == "" {
		o.o.SinkID = o.o.Subject
	}
	if cfg.Replicas > 1 && !o.serial.Load() {
		// A replicated stream refuses a publish whose expected sequence
		// is still being replicated (error 10164), so pipelined publishes
		// all but the first of a Write would be refused.
		o.serial.Store(true)
	}
	if !cfg.DenyDelete || !cfg.DenyPurge {
		o.o.logger().Warn("jetstream output: the stream allows deleting or purging messages; set deny_delete and deny_purge so that the output cannot lose records", "stream", o.o.Stream)
	}
	s := &session{o: o, js: js, st: st}
	raw, err := stream.GetLastMsgForSubject(ctx, o.o.Subject)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return s, broker.Last{}, nil
	case err != nil:
		return nil, broker.Last{}, fmt.Errorf("%s: read back: %w", o.Name(), err)
	}
	s.last = raw.Sequence
	last := broker.Last{Found: true, Value: raw.Data, Where: fmt.Sprintf("stream %s sequence %d", o.o.Stream, raw.Sequence)}
	for _, h := range []string{broker.HeaderSeq, broker.HeaderDB, broker.HeaderWriter} {
		if v := raw.Header.Get(h); v != "" {
			last.SetHeader(h, []byte(v))
		}
	}
	return s, last, nil
}

// session publishes with the expected last subject sequence.
type session struct {
	o  *Output
	nc *nats.Conn
	js jetstream.JetStream
	st broker.Stamp
	// last is the stream sequence of the subject's last message.
	last uint64
}

// Write publishes recs, pipelined unless the Output went serial.
func (s *session) Write(ctx context.Context, recs []broker.Outgoing) error {
	if s.o.serial.Load() {
		for i := range recs {
			if err := s.publish(ctx, recs[i:i+1]); err != nil {
				return err
			}
		}
		return nil
	}
	err := s.publish(ctx, recs)
	var pe *pipelineError
	if errors.As(err, &pe) && pe.index > 0 && wrongLast(pe.err) {
		s.o.serial.Store(true)
		s.o.o.logger().Info("jetstream output: another subject's messages share the stream; publishing one message at a time", "output", s.o.Name())
	}
	return err
}

// pipelineError is the first failed publish of a Write.
type pipelineError struct {
	index int
	seq   uint64
	err   error
}

func (e *pipelineError) Error() string {
	return fmt.Sprintf("publish record %d: %v", e.seq, e.err)
}

func (e *pipelineError) Unwrap() error { return e.err }

// publish sends recs asynchronously, each expecting the one before it,
// and waits for every acknowledgement.
func (s *session) publish(ctx context.Context, recs []broker.Outgoing) error {
	futures := make([]jetstream.PubAckFuture, 0, len(recs))
	var first *pipelineError
	for i, r := range recs {
		m := nats.NewMsg(s.o.o.Subject)
		m.Data = r.Value
		seq := strconv.FormatUint(r.Seq, 10)
		m.Header.Set(jetstream.MsgIDHeader, s.o.o.SinkID+":"+seq)
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(s.last+uint64(i), 10))
		m.Header.Set(broker.HeaderSeq, seq)
		m.Header.Set(broker.HeaderDB, s.st.DB)
		m.Header.Set(broker.HeaderWriter, s.st.Writer)
		f, err := s.js.PublishMsgAsync(m)
		if err != nil {
			first = &pipelineError{index: i, seq: r.Seq, err: err}
			break
		}
		futures = append(futures, f)
	}
	timer := time.NewTimer(s.o.o.AckTimeout)
	defer timer.Stop()
	var ackedTo uint64
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			if first == nil {
				ackedTo = ack.Sequence
			}
		case err := <-f.Err():
			if first == nil || i < first.index {
				first = &pipelineError{index: i, seq: recs[i].Seq, err: err}
			}
		case <-timer.C:
			if first == nil {
				first = &pipelineError{index: i, seq: recs[i].Seq, err: fmt.Errorf("no acknowledgement within %v", s.o.o.AckTimeout)}
			}
			return first
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if first != nil {
		return first
	}
	s.last = ackedTo
	return nil
}

// wrongLast reports whether the stream refused a publish for its
// expected last subject sequence.
func wrongLast(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Close closes the connection.
func (s *session) Close() error {
	s.nc.Close()
	return nil
}

var _ broker.Output = (*Output)(nil)
