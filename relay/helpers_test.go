package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cdclog/cdclog/broker"
	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/internal/streamgen"
	"github.com/cdclog/cdclog/recovery"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// memOutput is an in-memory output with fencing by epoch, like a Kafka
// topic with a transactional producer.
type memOutput struct {
	mu    sync.Mutex
	recs  []broker.Outgoing
	epoch int
	// down makes Open and Write fail with a retried error while set.
	down bool
	// foreign makes Open find a record another database wrote.
	foreign bool
}

func (o *memOutput) Name() string { return "mem:out" }

func (o *memOutput) Open(ctx context.Context, st broker.Stamp) (broker.Session, broker.Last, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down {
		return nil, broker.Last{}, errors.New("output down")
	}
	o.epoch++
	var last broker.Last
	switch n := len(o.recs); {
	case o.foreign:
		last = broker.Last{Found: true, Seq: 1, HasSeq: true, DB: "another", Value: []byte("x"), Where: "mem 0"}
	case n > 0:
		r := o.recs[n-1]
		last = broker.Last{Found: true, Seq: r.Seq, HasSeq: true, DB: st.DB, Writer: st.Writer, Value: r.Value, Where: fmt.Sprintf("mem %d", n-1)}
	}
	return &memSession{o: o, epoch: o.epoch}, last, nil
}

type memSession struct {
	o     *memOutput
	epoch int
}

func (s *memSession) Write(ctx context.Context, recs []broker.Outgoing) error {
	s.o.mu.Lock()
	defer s.o.mu.Unlock()
	switch {
	case s.epoch != s.o.epoch:
		return broker.Fatal(fmt.Errorf("%w: epoch %d, output at %d", broker.ErrFenced, s.epoch, s.o.epoch))
	case s.o.down:
		return errors.New("output down")
	}
	for _, r := range recs {
		s.o.recs = append(s.o.recs, broker.Outgoing{Seq: r.Seq, Value: slices.Clone(r.Value)})
	}
	return nil
}

func (s *memSession) Close() error { return nil }

func (o *memOutput) setDown(down bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = down
}

func (o *memOutput) seqs() []uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []uint64
	for _, r := range o.recs {
		out = append(out, r.Seq)
	}
	return out
}

// chanSource is an endless source fed through a channel; it fails with
// the error sent on fail. Its cursor counts the messages read.
type chanSource struct {
	name string
	msgs chan cdc.Message
	fail chan error
	read int
}

func newChanSource(name string) *chanSource {
	return &chanSource{name: name, msgs: make(chan cdc.Message, 1024), fail: make(chan error, 1)}
}

func (s *chanSource) Name() string { return s.name }

func (s *chanSource) Start(context.Context, []byte) error { return nil }

func (s *chanSource) Read(ctx context.Context, b *recovery.SourceBatch) error {
	defer func() { b.Cursor = []byte(fmt.Sprint(s.read)) }()
	for b.Len() < b.Max {
		if b.Len() > 0 {
			select {
			case m := <-s.msgs:
				b.Msgs, b.Pos = append(b.Msgs, m), append(b.Pos, cdc.Pos{Source: s.name})
				s.read++
				continue
			default:
				return nil
			}
		}
		select {
		case m := <-s.msgs:
			b.Msgs, b.Pos = append(b.Msgs, m), append(b.Pos, cdc.Pos{Source: s.name})
			s.read++
		case err := <-s.fail:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (s *chanSource) Close() error { return nil }

// sliceSource is a finite source of msgs.
type sliceSource struct {
	name string
	msgs []cdc.Message
}

func (s *sliceSource) Name() string                        { return s.name }
func (s *sliceSource) Start(context.Context, []byte) error { return nil }
func (s *sliceSource) Close() error                        { return nil }
func (s *sliceSource) Read(_ context.Context, b *recovery.SourceBatch) error {
	n := min(len(s.msgs), b.Max)
	b.Msgs = append(b.Msgs, s.msgs[:n]...)
	for range n {
		b.Pos = append(b.Pos, cdc.Pos{Source: s.name})
	}
	s.msgs = s.msgs[n:]
	b.Cursor = []byte("at")
	if len(s.msgs) == 0 {
		return io.EOF
	}
	return nil
}

// stream returns a mangled generated stream of times times.
func stream(times uint64) []cdc.Message {
	var msgs []cdc.Message
	for m := range streamgen.Mangle(streamgen.Gen(streamgen.GenOptions{Seed: 3, Times: times}), streamgen.MangleOptions{Seed: 4, MaxDelay: 8, MaxCopies: 2}) {
		msgs = append(msgs, m)
	}
	return msgs
}

func openProcessor(t *testing.T) (*recovery.Processor, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	p, err := recovery.Open(path, recovery.Options{NoSync: true, BatchDelay: time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, path
}

func newSink(p *recovery.Processor, out broker.Output) *Sink {
	return NewSink(p, out, SinkOptions{Name: "mem:out", SinkID: "s1", RecordEvery: 10 * time.Millisecond,
		Forwarder: broker.ForwarderOptions{BatchRecords: 64, RetryMin: time.Millisecond, RetryMax: 10 * time.Millisecond, Logger: quiet}})
}

// waitFor polls cond until it holds, failing t after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkAll asserts that out holds records 1..N of p once each, in order.
func checkAll(t *testing.T, p *recovery.Processor, out *memOutput) {
	t.Helper()
	seqs := out.seqs()
	if uint64(len(seqs)) != p.OutputEnd()-1 {
		t.Fatalf("output holds %d records, the database %d", len(seqs), p.OutputEnd()-1)
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("output record %d is record %d", i, s)
		}
	}
}
