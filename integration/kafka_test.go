package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/broker/kafka"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	inTopic  = "cdc-in"
	outTopic = "clean"
)

// quiet is a logger that drops everything, for the clients of tests that
// provoke errors on purpose.
var quiet = func() *slog.Logger {
	if os.Getenv("CDCLOG_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug - 4}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}()

// newKafka starts a kfake cluster of 3 brokers with a 4-partition input
// topic and a 1-partition output topic.
func newKafka(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3), kfake.SeedTopics(4, inTopic), kfake.SeedTopics(1, outTopic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// produceKafka writes msgs to topic, one JSON message per record, spread
// round-robin over partitions.
func produceKafka(t *testing.T, addrs []string, topic string, partitions int32, msgs []cdc.Message) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(msgs))
	for i := range msgs {
		recs[i] = &kgo.Record{Partition: int32(i) % partitions, Value: cdc.AppendJSON(nil, &msgs[i])}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readKafka reads partition 0 of topic read_committed up to its last
// stable offset.
func readKafka(t *testing.T, addrs []string, topic string) []outRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	lsos, err := kadm.NewClient(admCl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	lso, _ := lsos.Lookup(topic, 0)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []outRecord
	for next := int64(0); next < lso.Offset; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("read %s at %d of %d: %v", topic, next, lso.Offset, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			if r.Attrs.IsControl() {
				return
			}
			var l broker.Last
			for _, h := range r.Headers {
				l.SetHeader(h.Key, h.Value)
			}
			out = append(out, outRecord{Seq: l.Seq, DB: l.DB, Value: r.Value, Where: fmt.Sprintf("%s offset %d", topic, r.Offset)})
		})
	}
	return out
}

func kafkaSource(c *kfake.Cluster, o kafka.SourceOptions) *kafka.Source {
	o.Brokers, o.Topic, o.Logger = c.ListenAddrs(), inTopic, quiet
	if o.PartitionCheck == 0 {
		o.PartitionCheck = 100 * time.Millisecond
	}
	return kafka.NewSource(o)
}

func kafkaOutput(c *kfake.Cluster, sinkID string) *kafka.Output {
	return kafka.NewOutput(kafka.OutputOptions{Config: kafka.Config{Brokers: c.ListenAddrs(), Logger: quiet}, Topic: outTopic, SinkID: sinkID, ReadBackTimeout: 10 * time.Second})
}

// pipeline runs ingest from src and a forwarder to out until stop.
type pipeline struct {
	cancel           context.CancelFunc
	wg               sync.WaitGroup
	ingestErr, fwErr error
	fw               *broker.Forwarder
}

func startPipeline(p *recovery.Processor, db string, src recovery.Source, out broker.Output) *pipeline {
	ctx, cancel := context.WithCancel(context.Background())
	pl := &pipeline{cancel: cancel}
	pl.fw = broker.NewForwarder(p, out, broker.ForwarderOptions{DatabaseID: db, BatchRecords: 256, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond, Logger: quiet})
	pl.wg.Add(2)
	go func() { defer pl.wg.Done(); pl.ingestErr = ingest(ctx, p, src) }()
	go func() { defer pl.wg.Done(); pl.fwErr = pl.fw.Run(ctx) }()
	return pl
}

// stop ends the pipeline and fails the test on an error other than the
// context's end.
func (pl *pipeline) stop(t *testing.T) {
	t.Helper()
	pl.cancel()
	pl.wg.Wait()
	if pl.ingestErr != nil && !isCtx(pl.ingestErr) {
		t.Errorf("ingest: %v", pl.ingestErr)
	}
	if pl.fwErr != nil && !isCtx(pl.fwErr) {
		t.Errorf("forwarder: %v", pl.fwErr)
	}
}

// waitDone waits until the processor has the whole stream and the
// forwarder has sent all of it.
func (pl *pipeline) waitDone(t *testing.T, p *recovery.Processor, times uint64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !(complete(p, times) && pl.fw.Lag() == 0 && pl.fw.Acked() == p.OutputEnd()-1) {
		if time.Now().After(deadline) {
			f, _ := p.Frontier()
			st, _ := p.Status()
			t.Fatalf("timed out: frontier %d of %d (%s), output end %d, acked %d, cursors %v", f, times, st.Reason, p.OutputEnd(), pl.fw.Acked(), cursorText(p))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// conns tracks the connections each kfake broker accepted, so that a
// test can cut them when it takes the broker down: kfake's RemoveNode
// closes the listener only, and a removed broker would go on answering
// on the connections it had, which a real broker that went down does not.
type conns struct {
	mu sync.Mutex
	by map[string][]net.Conn // by listen address
}

func (c *conns) listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return &trackedListener{Listener: ln, c: c}, nil
}

// cut closes every connection accepted on addr.
func (c *conns) cut(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.by[addr] {
		conn.Close()
	}
	delete(c.by, addr)
}

type trackedListener struct {
	net.Listener
	c *conns
}

func (l *trackedListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err == nil {
		l.c.mu.Lock()
		if l.c.by == nil {
			l.c.by = map[string][]net.Conn{}
		}
		addr := l.Addr().String()
		l.c.by[addr] = append(l.c.by[addr], conn)
		l.c.mu.Unlock()
	}
	return conn, err
}

// restartBroker takes broker node down, cutting its connections, waits,
// and brings it back on the same port.
func restartBroker(t *testing.T, c *kfake.Cluster, tr *conns, node int32, down time.Duration) {
	t.Helper()
	addr := c.ListenAddrs()[node]
	_, port, err := splitPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveNode(node); err != nil {
		t.Fatal(err)
	}
	tr.cut(addr)
	time.Sleep(down)
	if _, _, err := c.AddNode(node, port); err != nil {
		t.Fatal(err)
	}
}

func TestKafkaToKafkaExactlyOnceThroughLeaderMovesABrokerRestartAndANewPartition(t *testing.T) {
	tr := &conns{}
	c := newKafka(t, kfake.ListenFn(tr.listen))
	const times = 400
	input := mangled(times, 1)
	third := len(input) / 3
	produceKafka(t, c.ListenAddrs(), inTopic, 4, input[:third])

	p, db := openDB(t, tempDB(t))
	defer p.Close()
	pl := startPipeline(p, db, kafkaSource(c, kafka.SourceOptions{}), kafkaOutput(c, ""))
	waitFor(t, 30*time.Second, "first output on the broker", func() bool { return pl.fw.Acked() > 0 })

	// Leaders move; a broker goes away and comes back on its port.
	c.ShufflePartitionLeaders()
	for p := int32(0); p < 4; p++ {
		if err := c.MoveTopicPartition(inTopic, p, p%3); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.MoveTopicPartition(outTopic, 0, 2); err != nil {
		t.Fatal(err)
	}
	produceKafka(t, c.ListenAddrs(), inTopic, 4, input[third:2*third])
	restartBroker(t, c, tr, 1, 300*time.Millisecond)
	c.ShufflePartitionLeaders()

	// A partition is added mid-run: it is read from its start.
	adm := newAdmin(t, c)
	if _, err := adm.CreatePartitions(context.Background(), 2, inTopic); err != nil {
		t.Fatal(err)
	}
	produceKafka(t, c.ListenAddrs(), inTopic, 6, input[2*third:])

	pl.waitDone(t, p, times)
	pl.stop(t)
	checkOutput(t, readKafka(t, c.ListenAddrs(), outTopic), p.OutputEnd(), input)
	cur, err := kafka.DecodeCursor(p.Cursor("kafka:" + inTopic))
	if err != nil || len(cur.Partitions) != 6 {
		t.Errorf("cursor %+v, %v: want 6 partitions", cur, err)
	}
}

func newAdmin(t *testing.T, c *kfake.Cluster) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func splitPort(addr string) (string, int, error) {
	var host string
	var port int
	i := len(addr) - 1
	for i >= 0 && addr[i] != ':' {
		i--
	}
	host = addr[:i]
	_, err := fmt.Sscanf(addr[i+1:], "%d", &port)
	return host, port, err
}

func TestKafkaRestartResumesFromTheCommittedPositions(t *testing.T) {
	c := newKafka(t)
	const times = 300
	input := mangled(times, 2)
	half := len(input) / 2
	produceKafka(t, c.ListenAddrs(), inTopic, 4, input[:half])
	path := tempDB(t)

	p, db := openDB(t, path)
	pl := startPipeline(p, db, kafkaSource(c, kafka.SourceOptions{}), kafkaOutput(c, ""))
	waitFor(t, 30*time.Second, "the first half ingested", func() bool {
		cur, err := kafka.DecodeCursor(p.Cursor("kafka:" + inTopic))
		n := int64(0)
		for _, pos := range cur.Partitions {
			n += pos.Offset
		}
		return err == nil && n == int64(half)
	})
	pl.stop(t)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	produceKafka(t, c.ListenAddrs(), inTopic, 4, input[half:])
	p, db2 := openDB(t, path)
	defer p.Close()
	if db2 != db {
		t.Fatalf("database id changed from %s to %s", db, db2)
	}
	src := &countingSource{Source: kafkaSource(c, kafka.SourceOptions{})}
	pl = startPipeline(p, db, src, kafkaOutput(c, ""))
	pl.waitDone(t, p, times)
	pl.stop(t)
	if src.msgs != len(input)-half {
		t.Errorf("the restarted source read %d messages, want the %d not committed", src.msgs, len(input)-half)
	}
	checkOutput(t, readKafka(t, c.ListenAddrs(), outTopic), p.OutputEnd(), input)
}

// countingSource counts the messages read.
type countingSource struct {
	recovery.Source
	msgs int
}

func (s *countingSource) Read(ctx context.Context, b *recovery.SourceBatch) error {
	err := s.Source.Read(ctx, b)
	s.msgs += len(b.Msgs)
	return err
}

func TestKafkaRetentionGapStopsWithATypedErrorUnlessAllowed(t *testing.T) {
	c := newKafka(t)
	input := mangled(100, 3)
	produceKafka(t, c.ListenAddrs(), inTopic, 4, input[:40])
	path := tempDB(t)
	p, _ := openDB(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ingest(ctx, p, kafkaSource(c, kafka.SourceOptions{})) }()
	waitFor(t, 30*time.Second, "40 messages ingested", func() bool {
		cur, _ := kafka.DecodeCursor(p.Cursor("kafka:" + inTopic))
		return cur.Partitions[2].Offset == 10
	})
	cancel()
	<-done

	// Retention deletes records of partition 2 that were never read.
	produceKafka(t, c.ListenAddrs(), inTopic, 4, input[40:])
	var offs kadm.Offsets
	offs.AddOffset(inTopic, 2, 15, -1)
	if _, err := newAdmin(t, c).DeleteRecords(context.Background(), offs); err != nil {
		t.Fatal(err)
	}
	err := ingest(context.Background(), p, kafkaSource(c, kafka.SourceOptions{}))
	var perr *broker.PositionError
	if !errors.Is(err, broker.ErrGap) || !errors.As(err, &perr) || perr.Position != 10 || perr.Start != 15 {
		t.Fatalf("got %v, want a gap at partition 2: position 10, log start 15", err)
	}
	t.Logf("the error reads: %v", err)

	// With AllowGap it goes on from the log's start.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- ingest(ctx, p, kafkaSource(c, kafka.SourceOptions{AllowGap: true})) }()
	waitFor(t, 30*time.Second, "partition 2 read past the gap", func() bool {
		cur, _ := kafka.DecodeCursor(p.Cursor("kafka:" + inTopic))
		return cur.Partitions[2].Offset > 15
	})
	cancel()
	if err := <-done; !isCtx(err) {
		t.Errorf("allow-gap ingest: %v", err)
	}
	p.Close()
}

func TestKafkaRecreatedTopicIsRefusedAsGoingBackwards(t *testing.T) {
	c := newKafka(t)
	input := mangled(50, 4)
	produceKafka(t, c.ListenAddrs(), inTopic, 4, input)
	p, _ := openDB(t, tempDB(t))
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ingest(ctx, p, kafkaSource(c, kafka.SourceOptions{})) }()
	waitFor(t, 30*time.Second, "some input ingested", func() bool { return p.Cursor("kafka:"+inTopic) != nil })
	cancel()
	<-done

	adm := newAdmin(t, c)
	if _, err := adm.DeleteTopics(context.Background(), inTopic); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(context.Background(), 4, 1, nil, inTopic); err != nil {
		t.Fatal(err)
	}
	err := ingest(context.Background(), p, kafkaSource(c, kafka.SourceOptions{}))
	if !errors.Is(err, broker.ErrBackwards) {
		t.Fatalf("got %v, want ErrBackwards", err)
	}
}

func TestKafkaSecondWriterOnOneSinkIDFencesTheOlder(t *testing.T) {
	c := newKafka(t)
	const times = 300
	input := mangled(times, 5)
	p, db := openDB(t, tempDB(t))
	defer p.Close()
	if _, err := p.Append(context.Background(), input[:len(input)/2], nil); err != nil {
		t.Fatal(err)
	}
	opts := broker.ForwarderOptions{DatabaseID: db, BatchRecords: 64, RetryMin: 20 * time.Millisecond, Logger: quiet}
	older := broker.NewForwarder(p, kafkaOutput(c, "orders"), opts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	olderDone := make(chan error, 1)
	go func() { olderDone <- older.Run(ctx) }()
	waitFor(t, 30*time.Second, "the older writer's first records", func() bool { return older.Acked() > 0 })

	newer := broker.NewForwarder(p, kafkaOutput(c, "orders"), opts)
	newerDone := make(chan error, 1)
	go func() { newerDone <- newer.Run(ctx) }()
	if _, err := p.Append(context.Background(), input[len(input)/2:], nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-olderDone:
		if !errors.Is(err, broker.ErrFenced) {
			t.Fatalf("older writer stopped with %v, want ErrFenced", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the older writer was not fenced")
	}
	waitFor(t, 60*time.Second, "the newer writer to catch up", func() bool { return newer.Acked() == p.OutputEnd()-1 })
	cancel()
	if err := <-newerDone; !isCtx(err) {
		t.Errorf("newer writer: %v", err)
	}
	checkOutput(t, readKafka(t, c.ListenAddrs(), outTopic), p.OutputEnd(), input)
}

func TestKafkaSinkSurvivesInjectedErrorsOnTransactionCommit(t *testing.T) {
	c := newKafka(t)
	const times = 300
	input := mangled(times, 6)
	p, db := openDB(t, tempDB(t))
	defer p.Close()
	if _, err := p.Append(context.Background(), input, nil); err != nil {
		t.Fatal(err)
	}
	// Commits answered REQUEST_TIMED_OUT after being applied (the client
	// cannot know they committed), and commits refused outright.
	applied := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.RequestTimedOut, Count: 3})
	refused := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Err: kerr.UnknownServerError, Count: 3})
	fw := broker.NewForwarder(p, kafkaOutput(c, ""), broker.ForwarderOptions{DatabaseID: db, BatchRecords: 32, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, Logger: quiet})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := fw.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if applied.Hits() == 0 || refused.Hits() == 0 {
		t.Errorf("faults hit %d and %d times: the test did not inject what it says", applied.Hits(), refused.Hits())
	}
	checkOutput(t, readKafka(t, c.ListenAddrs(), outTopic), p.OutputEnd(), input)
}

func cursorText(p *recovery.Processor) string {
	cur, err := kafka.DecodeCursor(p.Cursor("kafka:" + inTopic))
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(cur.Partitions)
}
