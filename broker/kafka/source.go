package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultPartitionCheck is how often a Source looks for partitions added
// to its topic.
const DefaultPartitionCheck = 10 * time.Second

// SourceOptions configure a Source.
type SourceOptions struct {
	Config
	// Topic is the input topic; every partition of it is read.
	Topic string
	// Format is the encoding of record values.
	Format cdc.Format
	// AllowGap goes on from the log's start (or end) where a committed
	// position is no longer in the log, instead of failing with a
	// *broker.PositionError.
	AllowGap bool
	// CommitGroup, when set, names a consumer group to which the
	// committed positions are written after each commit, for monitoring
	// tools only: the source never reads them back.
	CommitGroup string
	// PartitionCheck is how often to look for new partitions; zero means
	// DefaultPartitionCheck.
	PartitionCheck time.Duration
}

// Source reads every partition of a Kafka topic, assigned directly (no
// consumer group, no rebalancing), read_committed. It implements
// recovery.Source and recovery.Acknowledger.
type Source struct {
	o     SourceOptions
	log   *slog.Logger
	adm   *kadm.Client
	admCl *kgo.Client
	cl    *kgo.Client
	id    [16]byte

	// Owned by Read.
	pos   map[int32]Position // next offset per partition read from
	queue []*kgo.Record
	rec   *kgo.Record // the record whose parts are being taken
	parts []broker.Part
	taken int
	// warned is when each partition's last retried fetch error was
	// logged.
	warned map[int32]time.Time

	mu         sync.Mutex
	known      map[int32]bool  // partitions being consumed
	ends       map[int32]int64 // each partition's end as last fetched
	failed     error           // set by the partition watcher
	cancelPoll context.CancelCauseFunc

	stop chan struct{}
	wg   sync.WaitGroup
	acks chan []byte
}

// NewSource returns a Source; Start connects it.
func NewSource(o SourceOptions) *Source {
	if o.PartitionCheck <= 0 {
		o.PartitionCheck = DefaultPartitionCheck
	}
	return &Source{o: o, log: o.logger(), stop: make(chan struct{}), known: map[int32]bool{}, pos: map[int32]Position{}}
}

// Name returns "kafka:TOPIC": the cursor does not depend on the brokers.
func (s *Source) Name() string { return "kafka:" + s.o.Topic }

// Start checks the committed cursor against the topic and starts
// fetching: each partition of the cursor at its committed offset (with
// its leader epoch, so that a truncated log is detected), every other
// partition at its start.
func (s *Source) Start(ctx context.Context, cursor []byte) error {
	var err error
	if s.admCl, err = s.o.newClient(); err != nil {
		return err
	}
	s.adm = kadm.NewClient(s.admCl)
	td, err := s.topic(ctx)
	if err != nil {
		return err
	}
	s.id = td.ID
	cur := Cursor{Partitions: map[int32]Position{}}
	if len(cursor) > 0 {
		if cur, err = DecodeCursor(cursor); err != nil {
			return fmt.Errorf("%s: %w", s.Name(), err)
		}
	}
	offsets, err := s.startOffsets(ctx, td, cur)
	if err != nil {
		return err
	}
	reset := kgo.NoResetOffset()
	if s.o.AllowGap {
		reset = kgo.NewOffset().AtStart()
	}
	s.cl, err = s.o.newClient(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.o.Topic: offsets}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// A transaction's commit or abort marker takes an offset; kept,
		// it moves the position past itself (see read), so that a topic
		// written in transactions does not show a lag of 1 for ever.
		kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(reset),
	)
	if err != nil {
		return err
	}
	for p := range offsets {
		s.known[p] = true
	}
	s.wg.Add(1)
	go s.watch()
	if s.o.CommitGroup != "" {
		s.acks = make(chan []byte, 1)
		s.wg.Add(1)
		go s.commitGroup()
	}
	return nil
}

// topic returns the topic's metadata, failing when it does not exist.
func (s *Source) topic(ctx context.Context) (kadm.TopicDetail, error) {
	tds, err := s.adm.ListTopics(ctx, s.o.Topic)
	if err != nil {
		return kadm.TopicDetail{}, fmt.Errorf("%s: list topic: %w", s.Name(), err)
	}
	td, ok := tds[s.o.Topic]
	switch {
	case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
		return td, fmt.Errorf("%s: %w", s.Name(), errNoTopic)
	case td.Err != nil:
		return td, fmt.Errorf("%s: %w", s.Name(), td.Err)
	case len(td.Partitions) == 0:
		return td, fmt.Errorf("%s: the topic has no partitions", s.Name())
	}
	return td, nil
}

// errNoTopic: the topic does not exist.
var errNoTopic = errors.New("the topic does not exist")

// fetchRetryWait is how long a blocking poll that returned only errors
// the client retries waits before polling again: the client hands such
// an error back at once on every poll (a deleted topic's
// UNKNOWN_TOPIC_ID), which would otherwise spin.
const fetchRetryWait = 250 * time.Millisecond

// fetchWarnEvery bounds how often a partition's retried fetch error is
// logged.
const fetchWarnEvery = 10 * time.Second

// startOffsets checks the cursor against the log and returns where to
// start each partition.
func (s *Source) startOffsets(ctx context.Context, td kadm.TopicDetail, cur Cursor) (map[int32]kgo.Offset, error) {
	if len(cur.Partitions) > 0 && cur.TopicID != td.ID && cur.TopicID != [16]byte{} && td.ID != [16]byte{} {
		err := &broker.PositionError{Input: s.Name(), Start: -1, End: -1, Err: broker.ErrBackwards,
			Detail: "the topic was deleted and created anew (its id changed)"}
		if !s.o.AllowGap {
			return nil, err
		}
		s.log.Warn("kafka source: reading the re-created topic from its start", "err", err)
		cur.Partitions = map[int32]Position{}
	}
	starts, ends, err := s.bounds(ctx)
	if err != nil {
		return nil, err
	}
	s.noteEnds(ends)
	offsets := map[int32]kgo.Offset{}
	for _, p := range slices.Sorted(maps.Keys(cur.Partitions)) {
		pos := cur.Partitions[p]
		start, end, ok := bound(starts, ends, s.o.Topic, p)
		perr := &broker.PositionError{Input: s.input(p), Position: pos.Offset, Start: start, End: end}
		switch {
		case !ok:
			perr.Err, perr.Detail, perr.Start, perr.End = broker.ErrBackwards, "the partition no longer exists", -1, -1
			if !s.o.AllowGap {
				return nil, perr
			}
			s.log.Warn("kafka source: dropping a partition", "err", perr)
			continue
		case pos.Offset < start:
			perr.Err = broker.ErrGap
			if !s.o.AllowGap {
				return nil, perr
			}
			s.log.Warn("kafka source: skipping deleted records", "err", perr)
			pos = Position{Offset: start, Epoch: -1}
		case pos.Offset > end:
			perr.Err = broker.ErrBackwards
			if !s.o.AllowGap {
				return nil, perr
			}
			s.log.Warn("kafka source: going on from the log's end", "err", perr)
			pos = Position{Offset: end, Epoch: -1}
		}
		s.pos[p] = pos
		offsets[p] = kgo.NewOffset().At(pos.Offset).WithEpoch(pos.Epoch)
	}
	for p := range td.Partitions {
		if _, ok := offsets[p]; !ok {
			offsets[p] = kgo.NewOffset().AtStart()
		}
	}
	return offsets, nil
}

// bounds lists every partition's first offset and end offset.
func (s *Source) bounds(ctx context.Context) (starts, ends kadm.ListedOffsets, err error) {
	if starts, err = s.adm.ListStartOffsets(ctx, s.o.Topic); err == nil {
		ends, err = s.adm.ListEndOffsets(ctx, s.o.Topic)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: list offsets: %w", s.Name(), err)
	}
	return starts, ends, nil
}

func bound(starts, ends kadm.ListedOffsets, topic string, p int32) (start, end int64, ok bool) {
	so, ok1 := starts.Lookup(topic, p)
	eo, ok2 := ends.Lookup(topic, p)
	if !ok1 || !ok2 || so.Err != nil || eo.Err != nil {
		return -1, -1, false
	}
	return so.Offset, eo.Offset, true
}

// input names a partition in positions and errors.
func (s *Source) input(p int32) string { return s.Name() + "/" + strconv.Itoa(int(p)) }

// Read fills b with the next messages, blocking only while it holds none.
func (s *Source) Read(ctx context.Context, b *recovery.SourceBatch) error {
	err := s.read(ctx, b)
	b.Cursor = s.cursor()
	return err
}

func (s *Source) read(ctx context.Context, b *recovery.SourceBatch) error {
	moved := false // past a control record, with nothing in b
	for b.Len() < b.Max {
		if s.rec != nil {
			if err := s.take(b); err != nil {
				return err
			}
			continue
		}
		if len(s.queue) > 0 {
			r := s.queue[0]
			s.queue = s.queue[1:]
			if r.Attrs.IsControl() {
				// A transaction marker: no message, but the position
				// passes it.
				s.pos[r.Partition] = Position{Offset: r.Offset + 1, Epoch: r.LeaderEpoch}
				moved = true
				continue
			}
			s.rec = r
			s.parts, s.taken = broker.DecodeValue(s.o.Format, s.rec.Value, s.parts[:0]), 0
			continue
		}
		if moved && b.Len() == 0 {
			return nil // commit the position that passed the markers
		}
		if err := s.poll(ctx, b.Max-b.Len(), b.Len() == 0); err != nil {
			return err
		}
		if len(s.queue) == 0 {
			return nil // nothing more at once
		}
	}
	return nil
}

// take moves the current record's parts into b. The partition's position
// passes the record only once all its parts are taken: a record cut by
// b.Max is read again from its start after a restart, its first parts
// then being duplicates.
func (s *Source) take(b *recovery.SourceBatch) error {
	r := s.rec
	n, err := broker.Fill(b, s.parts[s.taken:], cdc.Pos{Source: s.input(r.Partition), Offset: r.Offset})
	s.taken += n
	if s.taken < len(s.parts) {
		s.pos[r.Partition] = Position{Offset: r.Offset, Epoch: r.LeaderEpoch}
		return err
	}
	s.pos[r.Partition] = Position{Offset: r.Offset + 1, Epoch: r.LeaderEpoch}
	s.rec = nil
	return err
}

// poll fetches records into the queue: waiting for some when block is
// set, otherwise only taking what the client has buffered.
func (s *Source) poll(ctx context.Context, max int, block bool) error {
	if !block {
		return s.fetched(ctx, s.cl.PollRecords(nil, max)) // a nil context: only what is buffered
	}
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	failed := s.failed
	s.cancelPoll = cancel
	s.mu.Unlock()
	if failed != nil {
		return failed
	}
	fs := s.cl.PollRecords(pctx, max)
	s.mu.Lock()
	s.cancelPoll, failed = nil, s.failed
	s.mu.Unlock()
	switch {
	case failed != nil:
		return failed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	if err := s.fetched(ctx, fs); err != nil || len(s.queue) > 0 || len(fs.Errors()) == 0 {
		return err
	}
	t := time.NewTimer(fetchRetryWait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// fetched queues the records of fs and returns the first error that ends
// the input.
func (s *Source) fetched(ctx context.Context, fs kgo.Fetches) error {
	var first error
	fs.EachError(func(topic string, p int32, err error) {
		if first == nil {
			first = s.fetchError(ctx, p, err)
		}
	})
	fs.EachRecord(func(r *kgo.Record) { s.queue = append(s.queue, r) })
	s.mu.Lock()
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		// read_committed: the last stable offset is where reading ends.
		end := p.LastStableOffset
		if end < 0 {
			end = p.HighWatermark
		}
		if end >= 0 && p.Err == nil {
			if s.ends == nil {
				s.ends = map[int32]int64{}
			}
			s.ends[p.Partition] = end
		}
	})
	s.mu.Unlock()
	return first
}

// noteEnds keeps the end offsets listed at Start, until fetches report
// newer ones.
func (s *Source) noteEnds(ends kadm.ListedOffsets) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ends.Each(func(o kadm.ListedOffset) {
		if o.Topic == s.o.Topic && o.Err == nil && o.Offset >= 0 {
			if s.ends == nil {
				s.ends = map[int32]int64{}
			}
			s.ends[o.Partition] = o.Offset
		}
	})
}

// LogEnds returns each partition's end offset (its last stable offset:
// the offset after the last record a read_committed reader can read) as
// the latest fetch that returned records reported it, or as listed at
// Start (the high watermark) before one did. Safe from any goroutine.
func (s *Source) LogEnds() map[int32]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.ends)
}

// fetchError classifies a fetch error: nil for one the client retries.
func (s *Source) fetchError(ctx context.Context, p int32, err error) error {
	var loss *kgo.ErrDataLoss
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil // ctx ended or the watcher failed: poll says which
	case errors.Is(err, kgo.ErrClientClosed):
		return fmt.Errorf("%s: %w", s.Name(), err)
	case errors.As(err, &loss):
		perr := &broker.PositionError{Input: s.input(p), Position: loss.ConsumedTo, Start: -1, End: -1, Err: broker.ErrBackwards,
			Detail: fmt.Sprintf("the partition's log was truncated (leader epoch %d); the client would resume at offset %d", loss.ConsumedToEpoch, loss.ResetTo)}
		if s.o.AllowGap {
			s.log.Warn("kafka source: going on after lost records", "err", perr)
			return nil
		}
		return perr
	case errors.Is(err, kerr.OffsetOutOfRange):
		return s.outOfRange(ctx, p)
	}
	var ke *kerr.Error
	if errors.As(err, &ke) && !ke.Retriable {
		return fmt.Errorf("%s: %w", s.input(p), err)
	}
	if now := time.Now(); now.Sub(s.warned[p]) >= fetchWarnEvery {
		if s.warned == nil {
			s.warned = map[int32]time.Time{}
		}
		s.warned[p] = now
		s.log.Warn("kafka source: fetch error, retrying", "partition", p, "err", err)
	}
	return nil
}

// outOfRange says whether a partition's position fell below the log's
// start or is past its end.
func (s *Source) outOfRange(ctx context.Context, p int32) error {
	pos := s.pos[p]
	perr := &broker.PositionError{Input: s.input(p), Position: pos.Offset, Start: -1, End: -1, Err: broker.ErrBackwards}
	if starts, ends, err := s.bounds(ctx); err == nil {
		perr.Start, perr.End, _ = bound(starts, ends, s.o.Topic, p)
	}
	if perr.Start >= 0 && pos.Offset < perr.Start {
		perr.Err = broker.ErrGap
	}
	return perr
}

// cursor returns the encoded positions.
func (s *Source) cursor() []byte {
	c := Cursor{TopicID: s.id, Partitions: s.pos}
	return c.Encode()
}

// watch looks for new partitions, which it starts at their first offset,
// and for the topic's deletion or re-creation, which stops the source.
func (s *Source) watch() {
	defer s.wg.Done()
	t := time.NewTicker(s.o.PartitionCheck)
	defer t.Stop()
	missing := 0 // consecutive checks that found no topic
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.o.PartitionCheck+10*time.Second)
		td, err := s.topic(ctx)
		cancel()
		if errors.Is(err, errNoTopic) {
			// Twice in a row, a check apart: not a metadata hiccup.
			if missing++; missing >= 2 {
				s.fail(&broker.PositionError{Input: s.Name(), Start: -1, End: -1, Err: broker.ErrBackwards,
					Detail: "the topic was deleted while it was read"})
				return
			}
		} else {
			missing = 0
		}
		if err != nil {
			s.log.Warn("kafka source: metadata", "err", err)
			continue
		}
		if td.ID != s.id && td.ID != [16]byte{} && s.id != [16]byte{} {
			s.fail(&broker.PositionError{Input: s.Name(), Start: -1, End: -1, Err: broker.ErrBackwards,
				Detail: "the topic was deleted and created anew while it was read (its id changed)"})
			return
		}
		add := map[int32]kgo.Offset{}
		s.mu.Lock()
		for p := range td.Partitions {
			if !s.known[p] {
				s.known[p] = true
				add[p] = kgo.NewOffset().AtStart()
			}
		}
		s.mu.Unlock()
		if len(add) > 0 {
			s.log.Info("kafka source: reading new partitions from their start", "topic", s.o.Topic, "partitions", slices.Sorted(maps.Keys(add)))
			s.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{s.o.Topic: add})
		}
	}
}

// fail records an error that stops the source and wakes a blocked Read.
func (s *Source) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = err
	}
	if s.cancelPoll != nil {
		s.cancelPoll(err)
	}
}

// Committed hands the committed cursor to the CommitGroup writer, which
// keeps only the latest.
func (s *Source) Committed(cursor []byte) {
	if s.acks == nil {
		return
	}
	for {
		select {
		case s.acks <- cursor:
			return
		default:
		}
		select {
		case <-s.acks: // drop the older one
		default:
		}
	}
}

// commitGroup writes committed cursors to the consumer group.
func (s *Source) commitGroup() {
	defer s.wg.Done()
	for {
		var cursor []byte
		select {
		case <-s.stop:
			return
		case cursor = <-s.acks:
		}
		c, err := DecodeCursor(cursor)
		if err != nil {
			continue
		}
		var offs kadm.Offsets
		for p, pos := range c.Partitions {
			offs.Add(kadm.Offset{Topic: s.o.Topic, Partition: p, At: pos.Offset, LeaderEpoch: pos.Epoch})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := s.adm.CommitOffsets(ctx, s.o.CommitGroup, offs)
		cancel()
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			s.log.Warn("kafka source: writing positions to the consumer group (for monitoring only)", "group", s.o.CommitGroup, "err", err)
		}
	}
}

// Close stops the source and its clients.
func (s *Source) Close() error {
	select {
	case <-s.stop:
		return nil
	default:
	}
	close(s.stop)
	s.wg.Wait()
	if s.cl != nil {
		s.cl.Close()
	}
	if s.admCl != nil {
		s.admCl.Close()
	}
	return nil
}

var (
	_ recovery.Source       = (*Source)(nil)
	_ recovery.Acknowledger = (*Source)(nil)
)
