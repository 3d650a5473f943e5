package recovery

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// scribblingSource serves msgs in reads of at most b.Max, and before each
// read overwrites everything the batch's slices held and the cursor bytes
// it handed out last time, as a source that reuses its memory may: any
// part of the processor still reading a recycled batch sees garbage.
type scribblingSource struct {
	msgs  []cdc.Message
	next  int
	cur   []byte // reused for every cursor
	reads atomic.Int64

	mu    sync.Mutex
	acked [][]byte
}

func (s *scribblingSource) Name() string                        { return "scribbler" }
func (s *scribblingSource) Start(context.Context, []byte) error { return nil }
func (s *scribblingSource) Close() error                        { return nil }
func (s *scribblingSource) Read(_ context.Context, b *SourceBatch) error {
	s.reads.Add(1)
	garbage := cdc.NewUpdate([]byte(`"garbage"`), 1<<40, 99)
	for i, full := 0, b.Msgs[:cap(b.Msgs)]; i < len(full); i++ {
		full[i] = garbage
	}
	for i, full := 0, b.Pos[:cap(b.Pos)]; i < len(full); i++ {
		full[i] = cdc.Pos{Source: "garbage", Line: -1}
	}
	for i := range s.cur {
		s.cur[i] = 'x'
	}
	for b.Len() < b.Max && s.next < len(s.msgs) {
		b.Msgs = append(b.Msgs, s.msgs[s.next])
		b.Pos = append(b.Pos, cdc.Pos{Source: "scribbler", Line: int64(s.next + 1)})
		s.next++
	}
	s.cur = strconv.AppendInt(s.cur[:0], int64(s.next), 10)
	b.Cursor = s.cur
	if s.next == len(s.msgs) {
		return io.EOF
	}
	return nil
}

func (s *scribblingSource) Committed(cursor []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acked = append(s.acked, bytes.Clone(cursor))
}

func (s *scribblingSource) ackCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.acked)
}

// gatedSink is a simSink whose writes wait until open is closed: the
// commit goroutine writes a batch's output after its transaction and
// before its results are delivered, so no batch is acknowledged, and none
// after the first commits, before then.
type gatedSink struct {
	simSink
	open chan struct{}
}

func (s *gatedSink) Write(p []byte) (int, error) {
	<-s.open
	return s.simSink.Write(p)
}

// Ingest hands a read buffer back to the source once its batch is encoded,
// before the batch commits, and nothing it commits (output, WAL, cursor,
// acknowledgements) depends on what the source writes into the buffer
// afterwards.
func TestIngestReusesAReadBufferBeforeItsBatchCommits(t *testing.T) {
	// In order, so that the first batch has output to write.
	msgs := cleanStream(3, 0, 300)
	src := &scribblingSource{msgs: msgs}
	sink := &gatedSink{open: make(chan struct{})}
	path := dbPath(t)
	p := openTest(t, path, Options{Sink: sink, SinkName: "out", BatchMessages: 64})
	done := make(chan error, 1)
	go func() {
		_, err := p.Ingest(context.Background(), src, IngestOptions{InFlight: 1})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for src.reads.Load() < 2 {
		if time.Now().After(deadline) {
			close(sink.open)
			t.Fatal("the one read buffer was not handed back before its batch committed")
		}
		time.Sleep(time.Millisecond)
	}
	if n := src.ackCount(); n != 0 {
		t.Fatalf("%d batches acknowledged while every write is held", n)
	}
	close(sink.open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := p.Cursor("scribbler"); string(got) != strconv.Itoa(len(msgs)) {
		t.Errorf("committed cursor %q, want %d", got, len(msgs))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	want := inMemory(t, msgs)
	if got := sink.bytes(); !bytes.Equal(got, want) {
		t.Errorf("output differs from the in-memory receiver's:\n%s\nwant\n%s", got, want)
	}
	if got := storedOutput(t, path); !bytes.Equal(got, want) {
		t.Errorf("stored records differ from the in-memory receiver's")
	}
	prev := -1
	for _, c := range src.acked {
		n, err := strconv.Atoi(string(c))
		if err != nil || n <= prev {
			t.Fatalf("acknowledged cursors %q: not increasing numbers", src.acked)
		}
		prev = n
	}
	if prev != len(msgs) {
		t.Errorf("last acknowledged cursor %d, want %d", prev, len(msgs))
	}
}
