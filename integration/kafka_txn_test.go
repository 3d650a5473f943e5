package integration

import (
	"context"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker/kafka"
	"github.com/cdclog/cdclog/cdc"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceInTransaction writes msgs to partition 0 of topic in one
// transaction of a transactional producer, committed or aborted.
func produceInTransaction(t *testing.T, cl *kgo.Client, topic string, msgs []cdc.Message, commit bool) {
	t.Helper()
	ctx := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range msgs {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: cdc.AppendJSON(nil, &msgs[i])}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}

// A topic written in transactions (Debezium's or Materialize's
// exactly-once producers) holds a commit or abort marker after each
// transaction, at an offset of its own: the source's position passes the
// markers, so that it ends at the log's end (lag 0) rather than one
// before it for ever, and aborted records are not ingested.
func TestKafkaTransactionalInputEndsAtTheLogEndAndSkipsAbortedRecords(t *testing.T) {
	c := newKafka(t)
	const topic = "txin"
	if _, err := newAdmin(t, c).CreateTopic(context.Background(), 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID("producer"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	input := mangled(60, 31)
	half := len(input) / 2
	produceInTransaction(t, cl, topic, input[:half], true)
	// An aborted transaction of updates that contradict the stream: were
	// they ingested, the receiver would report violations.
	bogus := []cdc.Message{cdc.NewUpdate([]byte(`"bogus"`), 0, 1), cdc.NewProgress(0, 1)}
	produceInTransaction(t, cl, topic, bogus, false)
	produceInTransaction(t, cl, topic, input[half:], true)

	p, _ := openDB(t, tempDB(t))
	defer p.Close()
	src := kafka.NewSource(kafka.SourceOptions{Config: kafka.Config{Brokers: c.ListenAddrs(), Logger: quiet}, Topic: topic, PartitionCheck: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ingest(ctx, p, src) }()
	end := func() int64 { return src.LogEnds()[0] }
	pos := func() int64 {
		cur, err := kafka.DecodeCursor(p.Cursor(src.Name()))
		if err != nil {
			return -1
		}
		return cur.Partitions[0].Offset
	}
	waitForState(t, 30*time.Second, "the committed position at the log's end", func() bool {
		return complete(p, 60) && end() > 0 && pos() == end()
	}, func() string { return "" })
	cancel()
	if err := <-done; err != nil && !isCtx(err) {
		t.Fatal(err)
	}
	var out []cdc.Message
	for rec, err := range p.Output(ctxTimeout(t, 10*time.Second), 1) {
		if err != nil {
			break
		}
		out = append(out, rec.Msg)
		if rec.Seq == p.OutputEnd()-1 {
			break
		}
	}
	got, _ := perTime(t, out)
	want, _ := perTime(t, demangled(t, input))
	if len(got) != len(want) {
		t.Fatalf("output has updates at %d times, demangle %d", len(got), len(want))
	}
	if st, err := p.Status(); err != nil || st.Violations != 0 {
		t.Fatalf("status %+v, %v: an aborted record was ingested", st, err)
	}
}
