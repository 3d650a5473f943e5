package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/broker/jetstream"
	njs "github.com/nats-io/nats.go/jetstream"
)

// A subject that the output stream does not hold is refused when the
// session opens: published to, it would land in another stream that
// holds it (whose acknowledgements the output would take for its own,
// while the read-back finds the output stream empty), or in none.
func TestJetStreamOutputRefusesASubjectItsStreamDoesNotHold(t *testing.T) {
	addr, js := singleNATS(t, nil)
	for _, cfg := range []njs.StreamConfig{
		{Name: "OUT", Subjects: []string{"out.s", "wide.>"}, Storage: njs.FileStorage, DenyDelete: true, DenyPurge: true, AllowAtomicPublish: true},
		{Name: "OTHER", Subjects: []string{"other.s"}, Storage: njs.FileStorage, AllowAtomicPublish: true},
	} {
		if _, err := js.CreateStream(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	input := mangled(20, 21)
	p, db := openDB(t, tempDB(t))
	defer p.Close()
	if _, err := p.Append(context.Background(), input, nil); err != nil {
		t.Fatal(err)
	}
	drain := func(subject string) error {
		out := jetstream.NewOutput(jetstream.OutputOptions{Config: jetstream.Config{Servers: []string{addr}, Logger: quiet},
			Stream: "OUT", Subject: subject, AckTimeout: 5 * time.Second})
		fw := broker.NewForwarder(p, out, broker.ForwarderOptions{DatabaseID: db, RetryMin: 10 * time.Millisecond, Logger: quiet})
		return fw.Drain(ctxTimeout(t, 20*time.Second))
	}
	for _, subject := range []string{"other.s", "nowhere.s", "wide"} {
		err := drain(subject)
		if !errors.Is(err, broker.ErrOutputConfig) || !strings.Contains(err.Error(), "not one of") {
			t.Errorf("subject %s: got %v, want ErrOutputConfig saying the stream does not hold it", subject, err)
		}
	}
	if got := readSubject(t, js, "OTHER", "other.s"); len(got) != 0 {
		t.Errorf("stream OTHER received %d records meant for OUT", len(got))
	}
	if err := drain("wide.a.b"); err != nil {
		t.Fatalf("a subject matched by the stream's wildcard: %v", err)
	}
	checkOutput(t, readSubject(t, js, "OUT", "wide.a.b"), p.OutputEnd(), input)
}
