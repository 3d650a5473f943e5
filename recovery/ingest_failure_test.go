package recovery

import (
	"context"
	"errors"
	"testing"
	"time"
)

// idleSource is a live input that has nothing to read: Read waits for its
// context, as a followed file or a quiet broker input does.
type idleSource struct{}

func (idleSource) Name() string                        { return "idle" }
func (idleSource) Start(context.Context, []byte) error { return nil }
func (idleSource) Close() error                        { return nil }
func (idleSource) Read(ctx context.Context, _ *SourceBatch) error {
	<-ctx.Done()
	return ctx.Err()
}

func TestAnIngestWaitingForInputEndsWhenTheProcessorFails(t *testing.T) {
	for _, fault := range []struct {
		name string
		f    sinkFault
	}{{"a failed write of the output file", shortWrite}, {"a failed fsync of the output file", lostSync}} {
		t.Run(fault.name, func(t *testing.T) {
			sink := &simSink{}
			sink.failAfter(fault.f, 0)
			p := openTest(t, dbPath(t), Options{Sink: sink, SinkName: "out.jsonl"})
			defer p.Close()
			done := make(chan error, 1)
			go func() {
				_, err := p.Ingest(context.Background(), idleSource{}, IngestOptions{})
				done <- err
			}()
			// Another writer's batch commits and its output fails.
			p.Append(context.Background(), cleanStream(6, 0, 10), nil)
			select {
			case err := <-done:
				if !errors.Is(err, ErrFailed) {
					t.Fatalf("Ingest returned %v, want the processor's failure (ErrFailed)", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Ingest still waits for input after the processor failed")
			}
		})
	}
}
