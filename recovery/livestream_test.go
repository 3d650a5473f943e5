package recovery

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"

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
