package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/broker/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
)

// An input topic deleted while it is read stops the source with
// ErrBackwards, as a JetStream stream deleted does, rather than
// fetching (and logging a warning) in a busy loop for ever.
func TestKafkaTopicDeletedWhileReadStopsTheSourceWithoutABusyLoop(t *testing.T) {
	c := newKafka(t)
	input := mangled(50, 22)
	produceKafka(t, c.ListenAddrs(), inTopic, 4, input)
	p, _ := openDB(t, tempDB(t))
	defer p.Close()
	log, logs := logBuffer()
	src := kafka.NewSource(kafka.SourceOptions{Config: kafka.Config{Brokers: c.ListenAddrs(), Logger: log,
		Opts: []kgo.Opt{kgo.MetadataMinAge(50 * time.Millisecond)}}, Topic: inTopic, PartitionCheck: 200 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- ingest(context.Background(), p, src) }()
	waitFor(t, 30*time.Second, "the input ingested", func() bool { return complete(p, 50) })
	if _, err := newAdmin(t, c).DeleteTopics(context.Background(), inTopic); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, broker.ErrBackwards) || !strings.Contains(err.Error(), "deleted") {
			t.Errorf("got %v, want ErrBackwards saying the topic was deleted", err)
		}
	case <-time.After(20 * time.Second):
		src.Close()
		<-done
		t.Errorf("the source still reads 20s after its topic was deleted")
	}
	if n := strings.Count(logs.String(), "fetch error"); n > 20 {
		t.Errorf("%d fetch error warnings, a busy loop", n)
	}
}
