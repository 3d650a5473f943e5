package recovery

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// brokenPipe is a stream whose reader goes away after a few writes.
type brokenPipe struct {
	bytes.Buffer
	writes int // successful writes before it breaks
}

func (b *brokenPipe) Write(p []byte) (int, error) {
	if b.writes == 0 {
		return 0, syscall.EPIPE
	}
	b.writes--
	return b.Buffer.Write(p)
}

func TestALiveStreamGetsAgainWhatARunCommittedButDidNotWrite(t *testing.T) {
	path := dbPath(t)
	msgs := mangled(81, cleanStream(81, 0, 1500))
	want := inMemory(t, msgs)
	first := &brokenPipe{writes: 3}
	p := openTest(t, path, Options{Live: first, BatchMessages: 200})
	var err error
	i := 0
	for ; i < len(msgs) && err == nil; i += 200 {
		_, err = p.Append(context.Background(), msgs[i:min(len(msgs), i+200)], nil)
	}
	if !errors.Is(err, ErrLiveOutput) || errors.Is(err, ErrFailed) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("a broken stream: %v, want ErrLiveOutput (not a storage failure)", err)
	}
	if cerr := p.Close(); !errors.Is(cerr, ErrLiveOutput) {
		t.Fatalf("Close: %v", cerr)
	}
	var second bytes.Buffer
	p = openTest(t, path, Options{Live: &second, BatchMessages: 200})
	appendAll(t, p, msgs, 200) // from the start: the committed part is duplicates
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	got := append(first.Bytes(), second.Bytes()...)
	if !bytes.Equal(got, want) {
		t.Fatalf("the two runs' streams hold %d bytes, want the clean stream's %d exactly (the second starting where the first stopped)", len(got), len(want))
	}
}

func TestAStreamGetsTheRecordsCommittedWhileItIsAttached(t *testing.T) {
	dir := t.TempDir()
	path, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	msgs := cleanStream(82, 0, 600)
	parts := [][]byte{inMemory(t, msgs[:400]), inMemory(t, msgs[:800]), inMemory(t, msgs)}
	// A run with an output file only: no stream is owed its records.
	runWithSink(t, path, out, msgs[:400])
	// A run with a stream gets the records committed from then on, and a
	// clean Close records that it got them all.
	for i, part := range [][]cdc.Message{msgs[400:800], nil, msgs[800:]} {
		var live bytes.Buffer
		p := openTest(t, path, Options{Live: &live})
		appendAll(t, p, part, 100)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		var want []byte
		switch i {
		case 0:
			want = parts[1][len(parts[0]):]
		case 2:
			want = parts[2][len(parts[1]):]
		}
		if !bytes.Equal(live.Bytes(), want) {
			t.Fatalf("run %d: the stream got %d bytes, want %d", i, live.Len(), len(want))
		}
	}
}

// An Output reader waiting for more records when the processor stops (here
// on a broken stream; a storage failure stops it alike) gets the error
// that stopped it instead of waiting for a commit that never comes, and so
// does an Output call made after the stop, once it has read what was
// committed.
func TestOutputReadersEndWhenTheProcessorStops(t *testing.T) {
	p := openTest(t, dbPath(t), Options{Live: &brokenPipe{writes: 2}})
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		for _, err := range p.Output(ctx, 1) {
			if err != nil {
				ended <- err
				return
			}
		}
		ended <- nil
	}()
	msgs := cleanStream(7, 0, 50)
	var err error
	for i := 0; i < len(msgs) && err == nil; i++ {
		_, err = p.Append(ctx, msgs[i:i+1], nil)
	}
	if !errors.Is(err, ErrLiveOutput) {
		t.Fatalf("Append: %v, want ErrLiveOutput", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, ErrLiveOutput) {
			t.Fatalf("the waiting reader ended with %v, want ErrLiveOutput", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an Output reader still waits for records 5 s after the processor stopped")
	}
	n := 0
	var last error
	for _, err := range p.Output(ctx, 1) {
		if err != nil {
			last = err
			break
		}
		n++
	}
	if !errors.Is(last, ErrLiveOutput) || uint64(n) != p.OutputEnd()-1 {
		t.Fatalf("an Output after the stop read %d records then %v, want the %d committed then ErrLiveOutput", n, last, p.OutputEnd()-1)
	}
}
