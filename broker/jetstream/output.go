package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of an Output.
const (
	// DefaultAckTimeout bounds the wait for a publish's or a batch's
	// acknowledgement.
	DefaultAckTimeout = 30 * time.Second
	// DefaultBatchMessages is nats-server's default limit on the
	// messages of one atomic batch (max_batch_size in the jetstream
	// limits of its configuration).
	DefaultBatchMessages = 1000
	// DefaultBatchBytes bounds the record values of one atomic batch,
	// which the stream's leader holds in memory until the commit.
	DefaultBatchBytes = 1 << 20
)

// ErrWrongLast: the stream refused a publish or an atomic batch because
// the subject's last message is not the one this writer last wrote or
// read back: another writer published to the subject since. Nothing of
// the refused publish or batch is on the stream.
var ErrWrongLast = errors.New("another writer published to the subject")

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
	// BatchMessages and BatchBytes bound an atomic batch: at most
	// BatchMessages messages, and at most BatchBytes bytes of values
	// unless one value alone is larger. Zero means DefaultBatchMessages
	// and DefaultBatchBytes. A server whose max_batch_size is lower
	// refuses a batch as too large; the Output then lowers its bound to
	// the server's limit (or halves it, should the refusal not say it).
	BatchMessages, BatchBytes int
}

// Output is a subject of a JetStream stream, as a broker.Output. It
// publishes in atomic batches (nats-server 2.12 or later, on a stream
// with allow_atomic), one batch per group of records the Forwarder hands
// it, split to stay within BatchMessages and BatchBytes; on a stream that
// does not allow atomic publish it falls back to publishing one record at
// a time, and says so once in the log.
//
// Every message carries Nats-Msg-Id "<sink-id>:<seq>" and the headers
// broker.HeaderSeq, HeaderDB and HeaderWriter. The first message of each
// batch carries Nats-Expected-Last-Subject-Sequence: the stream sequence
// of the subject's last message as this writer knows it (read back at
// Open, or acknowledged for the writer's previous batch). The server
// checks it when the batch commits, and stores the whole batch or none of
// it; it takes the expected sequence only on the first message for a
// subject in a batch, and refuses a batch whose Nats-Msg-Id duplicates a
// message in the stream's duplicate window. A session sends its next
// batch only after the previous one was acknowledged, and ends at its
// first error. So:
//
//   - Every sequence number is on the subject exactly once, in order: a
//     batch of records S+1..S+k lands only while the subject's last
//     message is the one holding record S, and lands whole.
//   - A second writer is refused: once one writer's batch moved the
//     subject's last message, a batch of the other, expecting the old
//     one, is refused whole (ErrWrongLast), and that writer's next
//     session finds the first one's records and stops with
//     broker.ErrFenced. JetStream has no producer fencing, so of two live
//     writers the one refused first stops, whichever started last.
//   - A refused batch is never followed by an accepted one: the session
//     ends at the refusal, before sending anything else.
//   - A batch whose commit was sent but whose acknowledgement was lost
//     (a connection cut, a leader killed, a timeout) is on the stream
//     whole or not at all. The next session reads back the subject's last
//     record and resumes after it, re-sending the batch only if it is not
//     there. A new stream leader serves only after applying what its
//     predecessor committed, and a read-back that is still stale makes
//     the re-sent batch expect the wrong last sequence (or repeat a
//     Nats-Msg-Id), which refuses it.
//
// Publishing one record at a time keeps the same argument with batches of
// one: each publish expects the sequence the previous one got, at one
// round trip and one replicated write per record. Pipelining single
// publishes, each expecting the previous one's guessed sequence, would be
// unsafe: after a refusal, a later guess can match another writer's
// message and leave a gap.
type Output struct {
	o OutputOptions
	// maxMessages is the batch bound, lowered when a server refuses a
	// batch as too large.
	maxMessages atomic.Int64
	// mode is how the last session published (0 before the first one):
	// a change is logged.
	mode atomic.Int32
}

// Publishing modes of an Output's sessions.
const (
	modeSingle int32 = 1 + iota
	modeBatch
)

// NewOutput returns an Output.
func NewOutput(o OutputOptions) *Output {
	if o.AckTimeout <= 0 {
		o.AckTimeout = DefaultAckTimeout
	}
	if o.BatchMessages <= 0 {
		o.BatchMessages = DefaultBatchMessages
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	out := &Output{o: o}
	out.maxMessages.Store(int64(o.BatchMessages))
	return out
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
	if !holds(cfg.Subjects, o.o.Subject) {
		// Published to, it would land in another stream that holds it
		// (whose acknowledgements would pass for this one's, while the
		// read-back finds nothing here), or in none.
		return nil, broker.Last{}, fmt.Errorf("%w: %s: subject %s is not one of stream %s's subjects %q", broker.ErrOutputConfig, o.Name(), o.o.Subject, o.o.Stream, cfg.Subjects)
	}
	if o.o.SinkID == "" {
		o.o.SinkID = o.o.Subject
	}
	if cfg.NoAck {
		return nil, broker.Last{}, fmt.Errorf("%w: nats:%s does not acknowledge publishes (no_ack): cdclog cannot know what it stored", broker.ErrOutputConfig, o.o.Stream)
	}
	if !cfg.DenyDelete || !cfg.DenyPurge {
		o.o.logger().Warn("jetstream output: the stream allows deleting or purging messages; set deny_delete and deny_purge so that the output cannot lose records", "stream", o.o.Stream)
	}
	s := &session{o: o, js: js, st: st, atomic: cfg.AllowAtomicPublish, maxMsgSize: int(cfg.MaxMsgSize)}
	o.logMode(s.atomic)
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

// logMode says how the output publishes, when that changes.
func (o *Output) logMode(atomic bool) {
	mode := modeSingle
	if atomic {
		mode = modeBatch
	}
	if o.mode.Swap(mode) == mode {
		return
	}
	log := o.o.logger()
	if atomic {
		log.Info("jetstream output: publishing in atomic batches", "stream", o.o.Stream, "subject", o.o.Subject, "batch_messages", o.maxMessages.Load())
		return
	}
	log.Warn(fmt.Sprintf("jetstream output: stream %s does not allow atomic batch publish, so each record is published alone and waits for its acknowledgement (slow); "+
		"enable it with `nats stream edit %s --allow-batch`, or allow_atomic: true in the stream's configuration (nats-server 2.12 or later)", o.o.Stream, o.o.Stream),
		"stream", o.o.Stream)
}

// session publishes with the expected last subject sequence.
type session struct {
	o  *Output
	nc *nats.Conn
	js jetstream.JetStream
	st broker.Stamp
	// atomic is whether the stream allows atomic batch publish.
	atomic bool
	// last is the stream sequence of the subject's last message.
	last uint64
	// maxMsgSize is the stream's max_msg_size (headers and data), -1 or
	// 0 for no limit of its own.
	maxMsgSize int
}

// Write publishes recs in order: in atomic batches where the stream
// allows them, else one at a time. On error a prefix of recs (whole
// batches) may be on the stream, and the session must not write again.
func (s *session) Write(ctx context.Context, recs []broker.Outgoing) error {
	if !s.atomic {
		for _, r := range recs {
			if err := s.publish(ctx, r); err != nil {
				return s.tooLarge([]broker.Outgoing{r}, err)
			}
		}
		return nil
	}
	for _, b := range split(recs, int(s.o.maxMessages.Load()), s.o.o.BatchBytes) {
		if err := s.commit(ctx, b); err != nil {
			return s.tooLarge(b, err)
		}
	}
	return nil
}

// fits refuses m, record r's message with all its headers, when it is
// larger than the stream's max_msg_size. The server refuses such a
// message, and in an atomic batch it only says that the batch is
// incomplete, which a new session would retry for ever.
func (s *session) fits(m *nats.Msg, r broker.Outgoing) error {
	if s.maxMsgSize <= 0 {
		return nil
	}
	size := m.Size() - len(m.Subject) - len(m.Reply)
	if size <= s.maxMsgSize {
		return nil
	}
	return fmt.Errorf("%w: %s: output record %d is %d bytes with its headers, over stream %s's max_msg_size of %d: %s",
		broker.ErrOutputConfig, s.o.Name(), r.Seq, size, s.o.o.Stream, s.maxMsgSize, s.raiseMaxMsgSize())
}

// raiseMaxMsgSize says how to raise the stream's max_msg_size.
func (s *session) raiseMaxMsgSize() string {
	return fmt.Sprintf("raise it (nats stream edit %s --max-msg-size)", s.o.o.Stream)
}

// tooLarge returns err, as an ErrOutputConfig (fatal) when it says that a
// record of recs is larger than the servers or the stream take: sending
// it again cannot succeed, and skipping it would leave a gap in the output. It names the
// largest record of recs, the one at fault.
func (s *session) tooLarge(recs []broker.Outgoing, err error) error {
	var api *jetstream.APIError
	payload := errors.Is(err, nats.ErrMaxPayload)
	if !payload && !(errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum) {
		return err
	}
	big := recs[0]
	for _, r := range recs {
		if len(r.Value) > len(big.Value) {
			big = r
		}
	}
	limit := fmt.Sprintf("stream %s's max_msg_size: %s", s.o.o.Stream, s.raiseMaxMsgSize())
	if payload {
		limit = fmt.Sprintf("the servers' max_payload of %d bytes, headers included: raise max_payload in the server configuration", s.nc.MaxPayload())
	}
	return fmt.Errorf("%w: %s: output record %d is %d bytes, over %s: %w", broker.ErrOutputConfig, s.o.Name(), big.Seq, len(big.Value), limit, err)
}

// message returns r as a message to the subject, with its Nats-Msg-Id
// and cdclog's headers.
func (s *session) message(r broker.Outgoing) *nats.Msg {
	m := nats.NewMsg(s.o.o.Subject)
	m.Data = r.Value
	seq := strconv.FormatUint(r.Seq, 10)
	m.Header.Set(jetstream.MsgIDHeader, s.o.o.SinkID+":"+seq)
	m.Header.Set(broker.HeaderSeq, seq)
	m.Header.Set(broker.HeaderDB, s.st.DB)
	m.Header.Set(broker.HeaderWriter, s.st.Writer)
	return m
}

// publish sends r alone, expecting the subject's last sequence as known,
// and waits for its acknowledgement.
func (s *session) publish(ctx context.Context, r broker.Outgoing) error {
	m := s.message(r)
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(s.last, 10))
	if err := s.fits(m, r); err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, s.o.o.AckTimeout)
	defer cancel()
	ack, err := s.js.PublishMsg(actx, m)
	if err != nil {
		if wrongLast(err) {
			return fmt.Errorf("%s: publish record %d: %w: %w", s.o.Name(), r.Seq, ErrWrongLast, err)
		}
		return fmt.Errorf("%s: publish record %d: %w", s.o.Name(), r.Seq, err)
	}
	if ack.Stream != s.o.o.Stream {
		return fmt.Errorf("%w: %s: record %d was stored by stream %s", broker.ErrOutputConfig, s.o.Name(), r.Seq, ack.Stream)
	}
	s.last = ack.Sequence
	return nil
}

// holds reports whether one of a stream's subjects (which may have
// wildcards) matches the literal subject.
func holds(subjects []string, subject string) bool {
	lit := strings.Split(subject, ".")
	for _, pattern := range subjects {
		pat := strings.Split(pattern, ".")
		for i, tok := range pat {
			if tok == ">" {
				if len(lit) > i {
					return true
				}
				break
			}
			if i >= len(lit) || tok != "*" && tok != lit[i] {
				break
			}
			if i == len(pat)-1 && len(lit) == len(pat) {
				return true
			}
		}
	}
	return false
}

// wrongLast reports whether the stream refused a publish or a batch for
// its expected last subject sequence.
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
