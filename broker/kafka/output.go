package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults of an Output.
const (
	// DefaultTransactionTimeout is the producer's transaction timeout;
	// the brokers' transaction.max.timeout.ms must be at least this.
	DefaultTransactionTimeout = time.Minute
	// DefaultReadBackTimeout bounds the read-back of the last record.
	DefaultReadBackTimeout = 30 * time.Second
)

// OutputOptions configure an Output.
type OutputOptions struct {
	Config
	// Topic is the output topic; it must exist with exactly one
	// partition.
	Topic string
	// SinkID names the sink; the transactional id is "cdclog-" + SinkID.
	// Two writers with one sink id fence each other. Empty means Topic.
	SinkID string
	// TransactionTimeout is the producer's transaction timeout; zero
	// means DefaultTransactionTimeout.
	TransactionTimeout time.Duration
	// ReadBackTimeout bounds the read-back; zero means
	// DefaultReadBackTimeout.
	ReadBackTimeout time.Duration
}

// Output is a one-partition Kafka topic written by a transactional
// producer, as a broker.Output: Open fences older producers of the same
// transactional id and reads back the last committed record
// (read_committed); each Write is one transaction.
type Output struct {
	o OutputOptions
}

// NewOutput returns an Output.
func NewOutput(o OutputOptions) *Output {
	if o.SinkID == "" {
		o.SinkID = o.Topic
	}
	if o.TransactionTimeout <= 0 {
		o.TransactionTimeout = DefaultTransactionTimeout
	}
	if o.ReadBackTimeout <= 0 {
		o.ReadBackTimeout = DefaultReadBackTimeout
	}
	return &Output{o: o}
}

// Name returns "kafka:TOPIC".
func (o *Output) Name() string { return "kafka:" + o.o.Topic }

// TransactionalID returns the producer's transactional id.
func (o *Output) TransactionalID() string { return "cdclog-" + o.o.SinkID }

// Open checks the topic, fences older producers (InitProducerID with
// the transactional id bumps its epoch and aborts what they left open)
// and reads back the last committed record.
func (o *Output) Open(ctx context.Context, st broker.Stamp) (broker.Session, broker.Last, error) {
	admCl, err := o.o.newClient()
	if err != nil {
		return nil, broker.Last{}, broker.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	if err := o.checkTopic(ctx, adm); err != nil {
		return nil, broker.Last{}, err
	}
	opts := []kgo.Opt{
		kgo.TransactionalID(o.TransactionalID()),
		kgo.TransactionTimeout(o.o.TransactionTimeout),
		kgo.DefaultProduceTopic(o.o.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}
	limit := o.maxMessageBytes(ctx, adm)
	if limit > 0 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(limit))
	}
	cl, err := o.o.newClient(opts...)
	if err != nil {
		return nil, broker.Last{}, broker.Fatal(err)
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return nil, broker.Last{}, classify(fmt.Errorf("%s: fence older writers: %w", o.Name(), err))
	}
	rctx, cancel := context.WithTimeout(ctx, o.o.ReadBackTimeout)
	defer cancel()
	last, err := o.readBack(rctx, adm)
	if err != nil {
		cl.Close()
		return nil, broker.Last{}, err
	}
	return &session{cl: cl, st: st, topic: o.o.Topic, name: o.Name(), limit: limit}, last, nil
}

// maxMessageBytes returns the topic's max.message.bytes, the largest
// record batch its brokers take, so that the producer's batches may be
// as large (franz-go's default is about 1 MB, Kafka's too); zero when
// the topic's configuration cannot be read.
func (o *Output) maxMessageBytes(ctx context.Context, adm *kadm.Client) int32 {
	rcs, err := adm.DescribeTopicConfigs(ctx, o.o.Topic)
	if err != nil {
		return 0
	}
	rc, err := rcs.On(o.o.Topic, nil)
	if err != nil || rc.Err != nil {
		return 0
	}
	for _, c := range rc.Configs {
		if c.Key == "max.message.bytes" && c.Value != nil {
			if n, err := strconv.ParseInt(*c.Value, 10, 32); err == nil && n > 0 {
				return int32(n)
			}
		}
	}
	return 0
}

// checkTopic fails unless the topic exists with one partition.
func (o *Output) checkTopic(ctx context.Context, adm *kadm.Client) error {
	tds, err := adm.ListTopics(ctx, o.o.Topic)
	if err != nil {
		return fmt.Errorf("%s: list topic: %w", o.Name(), err)
	}
	td, ok := tds[o.o.Topic]
	switch {
	case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
		return fmt.Errorf("%w: %s: the topic does not exist (create it with 1 partition; see docs/brokers.md)", broker.ErrOutputConfig, o.Name())
	case td.Err != nil:
		return classify(fmt.Errorf("%s: %w", o.Name(), td.Err))
	case len(td.Partitions) != 1:
		return fmt.Errorf("%w: %s has %d partitions; the output topic needs exactly 1, so that its order is the output's", broker.ErrOutputConfig, o.Name(), len(td.Partitions))
	}
	return nil
}

// readBack returns the last committed record of partition 0: it reads
// read_committed, keeping control records so that it knows when it has
// reached the last stable offset, from windows growing back from there
// until a window holds a data record or reaches the log's start.
func (o *Output) readBack(ctx context.Context, adm *kadm.Client) (broker.Last, error) {
	lsos, err := adm.ListCommittedOffsets(ctx, o.o.Topic)
	if err != nil {
		return broker.Last{}, fmt.Errorf("%s: read back: list offsets: %w", o.Name(), err)
	}
	starts, err := adm.ListStartOffsets(ctx, o.o.Topic)
	if err != nil {
		return broker.Last{}, fmt.Errorf("%s: read back: list offsets: %w", o.Name(), err)
	}
	lso, ok1 := lsos.Lookup(o.o.Topic, 0)
	start, ok2 := starts.Lookup(o.o.Topic, 0)
	if !ok1 || !ok2 || lso.Err != nil || start.Err != nil {
		return broker.Last{}, fmt.Errorf("%s: read back: no offsets for partition 0 (%v, %v)", o.Name(), lso.Err, start.Err)
	}
	for window := int64(16); ; window *= 16 {
		from := max(lso.Offset-window, start.Offset)
		if from >= lso.Offset {
			return broker.Last{}, nil // empty
		}
		r, err := o.lastIn(ctx, from, lso.Offset)
		if err != nil || r != nil {
			return o.last(r), err
		}
		if from == start.Offset {
			return broker.Last{}, nil // only control or aborted records
		}
	}
}

// lastIn returns the last data record in [from, end), read_committed.
func (o *Output) lastIn(ctx context.Context, from, end int64) (*kgo.Record, error) {
	cl, err := o.o.newClient(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{o.o.Topic: {0: kgo.NewOffset().At(from)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var last *kgo.Record
	for next := from; next < end; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: read back [%d, %d): reached %d: %w", o.Name(), from, end, next, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("%s: read back: %w", o.Name(), ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = max(next, r.Offset+1)
			if !r.Attrs.IsControl() {
				last = r
			}
		})
	}
	return last, nil
}

func (o *Output) last(r *kgo.Record) broker.Last {
	if r == nil {
		return broker.Last{}
	}
	l := broker.Last{Found: true, Value: r.Value, Where: fmt.Sprintf("%s offset %d", o.o.Topic, r.Offset)}
	for _, h := range r.Headers {
		l.SetHeader(h.Key, h.Value)
	}
	return l
}

// session is one fenced producer.
type session struct {
	cl    *kgo.Client
	st    broker.Stamp
	topic string
	name  string // the output's
	limit int32  // the topic's max.message.bytes, 0 if unknown
}

// Write produces recs as one transaction.
func (s *session) Write(ctx context.Context, recs []broker.Outgoing) error {
	if err := s.cl.BeginTransaction(); err != nil {
		return classify(err)
	}
	var (
		mu   sync.Mutex
		perr error
		prec *kgo.Record
	)
	done := func(r *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if perr == nil {
				perr, prec = err, r
			}
			mu.Unlock()
		}
	}
	for _, r := range recs {
		s.cl.Produce(ctx, &kgo.Record{Topic: s.topic, Partition: 0, Value: r.Value, Headers: []kgo.RecordHeader{
			{Key: broker.HeaderSeq, Value: strconv.AppendUint(nil, r.Seq, 10)},
			{Key: broker.HeaderDB, Value: []byte(s.st.DB)},
			{Key: broker.HeaderWriter, Value: []byte(s.st.Writer)},
		}}, done)
	}
	err := s.cl.Flush(ctx)
	mu.Lock()
	if err == nil {
		err = perr
	}
	mu.Unlock()
	if errors.Is(err, kerr.MessageTooLarge) && prec != nil {
		return s.tooLarge(prec, err) // an ErrOutputConfig: fatal
	}
	if err != nil {
		// The session ends: the next one's InitProducerID aborts what
		// this transaction left open.
		return classify(fmt.Errorf("produce: %w", err))
	}
	if err := s.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return classify(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// tooLarge is the error for a record the topic does not take: sending it
// again cannot succeed, and skipping it would leave a gap in the output.
func (s *session) tooLarge(r *kgo.Record, err error) error {
	seq := "?"
	if len(r.Headers) > 0 && r.Headers[0].Key == broker.HeaderSeq {
		seq = string(r.Headers[0].Value)
	}
	limit := "the producer's default of 1000012 bytes (the topic's max.message.bytes could not be read)"
	if s.limit > 0 {
		limit = fmt.Sprintf("the topic's max.message.bytes, %d", s.limit)
	}
	return fmt.Errorf("%w: %s: output record %s is %d bytes, over %s: raise the topic's max.message.bytes (and the brokers' message.max.bytes, replica.fetch.max.bytes) above it: %w",
		broker.ErrOutputConfig, s.name, seq, len(r.Value), limit, err)
}

// Close closes the producer.
func (s *session) Close() error {
	s.cl.Close()
	return nil
}

// classify marks the errors that retrying cannot cure: a fenced producer
// (ErrFenced) and refused authorisations.
func classify(err error) error {
	switch {
	case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch):
		return broker.Fatal(fmt.Errorf("%w: %w", broker.ErrFenced, err))
	case errors.Is(err, kerr.TransactionalIDAuthorizationFailed), errors.Is(err, kerr.TopicAuthorizationFailed),
		errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.SaslAuthenticationFailed):
		return broker.Fatal(err)
	}
	return err
}

var _ broker.Output = (*Output)(nil)
