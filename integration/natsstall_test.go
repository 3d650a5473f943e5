package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker/jetstream"
	njs "github.com/nats-io/nats.go/jetstream"
)

// replacedLine is what the source logs when its watchdog replaces a
// consumer that stopped delivering.
const replacedLine = "the consumer delivered nothing while the stream has more"

// pauseConsumers pauses every consumer of stream for an hour: a paused
// consumer keeps its pull requests and sends no error, it only stops
// delivering, so nats.go's ordered consumer never notices (the shape of
// the stall seen after a node dies).
func pauseConsumers(t *testing.T, js njs.JetStream, stream string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := 0
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	names := st.ConsumerNames(ctx)
	for name := range names.Name() {
		if _, err := js.PauseConsumer(ctx, stream, name, time.Now().Add(time.Hour)); err != nil {
			t.Fatalf("pause %s: %v", name, err)
		}
		n++
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestJetStreamSourceReplacesAConsumerThatStopsDeliveringWhileTheStreamGrows(t *testing.T) {
	for _, tc := range []struct {
		name, subject string
	}{
		{"whole stream", ""},
		{"subject filter", inSubject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, js := singleNATS(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if _, err := js.CreateStream(ctx, njs.StreamConfig{Name: inStream, Subjects: []string{inSubject, "other"}, Storage: njs.FileStorage}); err != nil {
				t.Fatal(err)
			}
			input := mangled(100, 21)
			half := len(input) / 2
			publishNATS(t, js, input[:half])
			log, logs := logBuffer()
			const stall = 400 * time.Millisecond
			src := &countingSource{Source: jetstream.NewSource(jetstream.SourceOptions{Config: jetstream.Config{Servers: []string{addr}, Logger: log},
				Stream: inStream, Subject: tc.subject, StallTimeout: stall})}
			p, _ := openDB(t, tempDB(t))
			defer p.Close()
			done := make(chan error, 1)
			go func() { done <- ingest(ctx, p, src) }()
			next := func() uint64 {
				cur, err := jetstream.DecodeCursor(p.Cursor(src.Name()))
				if err != nil {
					return 0
				}
				return cur.Next
			}
			waitFor(t, 30*time.Second, "the first half read", func() bool { return next() == uint64(half+1) })

			// Idle (nothing past what was delivered, only another
			// subject's messages with a filter): the consumer stays.
			if tc.subject != "" {
				if _, err := js.Publish(ctx, "other", []byte("not for the source")); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(5 * stall)
			if strings.Contains(logs.String(), replacedLine) {
				t.Fatalf("the consumer of an idle stream was replaced:\n%s", logs)
			}

			if n := pauseConsumers(t, js, inStream); n != 1 {
				t.Fatalf("paused %d consumers, want the source's one", n)
			}
			publishNATS(t, js, input[half:])
			want := uint64(len(input) + 1)
			if tc.subject != "" {
				want++ // the other subject's message is in the stream, not read
			}
			waitForState(t, 30*time.Second, "the second half read after the consumer stopped delivering", func() bool {
				return next() == want
			}, func() string { return fmt.Sprintf("cursor at %d, want %d; log:\n%s", next(), want, logs) })
			if !complete(p, 100) {
				f, _ := p.Frontier()
				t.Errorf("frontier %d, want the whole stream (100)", f)
			}
			cancel()
			if err := <-done; err != nil && !isCtx(err) {
				t.Fatalf("ingest: %v", err)
			}
			if src.msgs != len(input) {
				t.Errorf("the source handed on %d messages, the stream has %d: a message was handed on twice or skipped", src.msgs, len(input))
			}
			if l := logs.String(); !strings.Contains(l, replacedLine) || !strings.Contains(l, fmt.Sprintf("next=%d", half+1)) {
				t.Errorf("no warning naming the stalled position %d:\n%s", half+1, l)
			}
		})
	}
}
