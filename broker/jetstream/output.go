package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
// Publishes go one at a time: each waits for its acknowledgement and the
// next expects the sequence it got, so a refused publish is never
// followed by an accepted one (one round trip and one stored, replicated
// write per record). Pipelining them, each expecting the previous one's
// guessed sequence, is unsafe: after a refusal, a later guess can match
// another writer's message and leave a gap. nats-server's atomic batch
// publish would allow batches; it is not used yet.
type Output struct {
	o OutputOptions
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

// Write publishes recs one at a time.
func (s *session) Write(ctx context.Context, recs []broker.Outgoing) error {
	for _, r := range recs {
		if err := s.publish(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// publish sends r expecting the subject's last sequence as known, and
// waits for its acknowledgement.
func (s *session) publish(ctx context.Context, r broker.Outgoing) error {
	m := nats.NewMsg(s.o.o.Subject)
	m.Data = r.Value
	seq := strconv.FormatUint(r.Seq, 10)
	m.Header.Set(jetstream.MsgIDHeader, s.o.o.SinkID+":"+seq)
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(s.last, 10))
	m.Header.Set(broker.HeaderSeq, seq)
	m.Header.Set(broker.HeaderDB, s.st.DB)
	m.Header.Set(broker.HeaderWriter, s.st.Writer)
	actx, cancel := context.WithTimeout(ctx, s.o.o.AckTimeout)
	defer cancel()
	ack, err := s.js.PublishMsg(actx, m)
	if err != nil {
		if wrongLast(err) {
			return fmt.Errorf("publish record %d: another writer published to %s: %w", r.Seq, s.o.Name(), err)
		}
		return fmt.Errorf("publish record %d: %w", r.Seq, err)
	}
	s.last = ack.Sequence
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
