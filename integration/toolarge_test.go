package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/broker/jetstream"
	"github.com/cdclog/cdclog/broker/kafka"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
	"github.com/nats-io/nats-server/v2/server"
	njs "github.com/nats-io/nats.go/jetstream"
)

// bigRecordDB returns a processor whose output is one update of size
// bytes of data, then its progress statement, and the input.
func bigRecordDB(t *testing.T, size int) (*recovery.Processor, string, []cdc.Message) {
	t.Helper()
	data := []byte(`"` + strings.Repeat("x", size) + `"`)
	input := []cdc.Message{cdc.NewUpdate(data, 0, 1), cdc.NewProgress(0, 1, cdc.Count{Time: 0, Count: 1})}
	p, db := openDB(t, tempDB(t))
	t.Cleanup(func() { p.Close() })
	if _, err := p.Append(context.Background(), input, nil); err != nil {
		t.Fatal(err)
	}
	return p, db, input
}

// An output record larger than the broker takes used to be retried for
// ever (Kafka: MESSAGE_TOO_LARGE from the client's 1 MB batch limit;
// JetStream: maximum payload exceeded): it is a configuration error that
// names the record, its size and the limit to raise. A Kafka topic whose
// max.message.bytes is raised takes it.
func TestKafkaOutputRecordOverTheTopicsLimitIsAConfigurationError(t *testing.T) {
	c := newKafka(t)
	p, db, input := bigRecordDB(t, 1_200_000)
	big := "4194304"
	if _, err := newAdmin(t, c).CreateTopic(context.Background(), 1, 1, map[string]*string{"max.message.bytes": &big}, "bigout"); err != nil {
		t.Fatal(err)
	}
	drain := func(topic string) error {
		out := kafka.NewOutput(kafka.OutputOptions{Config: kafka.Config{Brokers: c.ListenAddrs(), Logger: quiet}, Topic: topic, ReadBackTimeout: 10 * time.Second})
		fw := broker.NewForwarder(p, out, broker.ForwarderOptions{DatabaseID: db, RetryMin: 10 * time.Millisecond, Logger: quiet})
		return fw.Drain(ctxTimeout(t, 30*time.Second))
	}
	err := drain(outTopic)
	if !errors.Is(err, broker.ErrOutputConfig) || !strings.Contains(err.Error(), "output record 1 is 1200040 bytes") ||
		!strings.Contains(err.Error(), "max.message.bytes") {
		t.Errorf("got %v, want ErrOutputConfig naming record 1, its size and max.message.bytes", err)
	}
	if err := drain("bigout"); err != nil {
		t.Fatalf("a topic with max.message.bytes %s: %v", big, err)
	}
	checkOutput(t, readKafka(t, c.ListenAddrs(), "bigout"), p.OutputEnd(), input)
}

func TestJetStreamOutputRecordOverTheServersOrStreamsLimitIsAConfigurationError(t *testing.T) {
	tests := []struct {
		name   string
		size   int
		stream njs.StreamConfig
		want   string
	}{
		{"max_payload", 1_200_000, njs.StreamConfig{Name: "OUT", Subjects: []string{"out.s"}, AllowAtomicPublish: true}, "max_payload of 1048576 bytes"},
		{"max_payload without atomic publish", 1_200_000, njs.StreamConfig{Name: "OUT", Subjects: []string{"out.s"}}, "max_payload of 1048576 bytes"},
		{"max_msg_size", 100_000, njs.StreamConfig{Name: "OUT", Subjects: []string{"out.s"}, AllowAtomicPublish: true, MaxMsgSize: 64 << 10}, "stream OUT's max_msg_size"},
		{"max_msg_size without atomic publish", 100_000, njs.StreamConfig{Name: "OUT", Subjects: []string{"out.s"}, MaxMsgSize: 64 << 10}, "stream OUT's max_msg_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, js := singleNATS(t, func(o *server.Options) { o.MaxPayload = 1 << 20 })
			tt.stream.Storage = njs.FileStorage
			if _, err := js.CreateStream(context.Background(), tt.stream); err != nil {
				t.Fatal(err)
			}
			p, db, _ := bigRecordDB(t, tt.size)
			out := jetstream.NewOutput(jetstream.OutputOptions{Config: jetstream.Config{Servers: []string{addr}, Logger: quiet},
				Stream: "OUT", Subject: "out.s", AckTimeout: 5 * time.Second})
			fw := broker.NewForwarder(p, out, broker.ForwarderOptions{DatabaseID: db, RetryMin: 10 * time.Millisecond, Logger: quiet})
			err := fw.Drain(ctxTimeout(t, 30*time.Second))
			if !errors.Is(err, broker.ErrOutputConfig) || !strings.Contains(err.Error(), "output record 1 is") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want ErrOutputConfig naming record 1 and %q", err, tt.want)
			}
		})
	}
}
