package input

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

func TestAStreamHandsOverWhatItHasWhenTheProducerPauses(t *testing.T) {
	pr, pw := io.Pipe()
	s := NewStream(pr, cdc.JSONL, "pipe", quietLog())
	defer s.Close()
	go io.WriteString(pw, updates(0, 2))
	b := newBatch()
	// The producer has not closed the pipe: Read returns what it has.
	if err := readOne(t, s, b, 10*time.Second); err != nil || b.Len() != 2 {
		t.Fatalf("got %d messages, %v", b.Len(), err)
	}
	go io.WriteString(pw, updates(2, 3)+`{"update":{"da`)
	if err := readOne(t, s, b, 10*time.Second); err != nil || b.Len() != 1 {
		t.Fatalf("after a pause mid-line: %d messages, %v", b.Len(), err)
	}
	pw.Close()
	// The producer closed in the middle of a message: the end of the
	// stream judges it.
	err := readOne(t, s, b, 10*time.Second)
	var de *cdc.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("a stream ended mid-message: %v", err)
	}
}

func TestAStreamBatchKeepsToItsLimits(t *testing.T) {
	in := updates(0, 100)
	for _, tc := range []struct {
		name          string
		max, maxBytes int
		want          int
	}{
		{"messages", 7, 0, 7},
		{"bytes", 1000, 3 * len(update(0)), 3},
		{"one", 1, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStream(io.NopCloser(stringsReader(in)), cdc.JSONL, "s", quietLog())
			defer s.Close()
			b := newBatch()
			b.Max, b.MaxBytes = tc.max, tc.maxBytes
			if err := readOne(t, s, b, 10*time.Second); err != nil || b.Len() != tc.want {
				t.Fatalf("%d messages, %v; want %d", b.Len(), err, tc.want)
			}
		})
	}
}

func TestAStoppedStreamHandsOverEverythingItRead(t *testing.T) {
	pr, pw := io.Pipe()
	s := NewStream(pr, cdc.JSONL, "pipe", quietLog())
	defer s.Close()
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(pw, updates(0, 3000)+`{"update":{"data":"half`)
		written <- err
	}()
	// The first Read starts the feeder; io.Pipe's Write returns once the
	// feeder has read it all: these bytes are out of the pipe, and only
	// the source holds them.
	b := newBatch()
	b.Max = 1
	if err := readOne(t, s, b, 10*time.Second); err != nil || b.Len() != 1 {
		t.Fatalf("the first read: %d messages, %v", b.Len(), err)
	}
	got := []uint64{b.Msgs[0].Update.Time}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rest, err := readUntil(t, ctx, s, newBatch())
	got = append(got, rest...)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ended with %v, want the context's error", err)
	}
	if !slices.Equal(got, seq(0, 3000)) {
		t.Fatalf("handed over %d messages of 3000", len(got))
	}
	pw.Close()
}

func TestAStreamStopsWhileItsProducerIsSilent(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	s := NewStream(pr, cdc.JSONL, "pipe", quietLog())
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	b := newBatch()
	done := make(chan error, 1)
	go func() { b.Reset(); done <- s.Read(ctx, b) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || b.Len() != 0 {
			t.Fatalf("%d messages, %v", b.Len(), err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not return after its context ended")
	}
}

// Two streams over one input (stdin given twice, a named pipe given
// twice) read it in turn: the first to its end, then the second, which
// finds the end. Each used to read ahead from the moment it was made, so
// the two took chunks of the input in turn and tore the messages at their
// edges.
func TestTwoStreamsOverOneInputReadItInTurn(t *testing.T) {
	pr, pw := io.Pipe()
	first := NewStream(io.NopCloser(pr), cdc.JSONL, "stdin", quietLog())
	defer first.Close()
	second := NewStream(io.NopCloser(pr), cdc.JSONL, "stdin", quietLog())
	defer second.Close()
	const n = 2000
	go func() {
		// Many small writes: each goes to whichever read is waiting.
		for i := range n {
			io.WriteString(pw, update(i))
		}
		pw.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := readUntil(t, ctx, first, newBatch())
	if err != io.EOF {
		t.Fatalf("the first stream ended with %v after %d messages", err, len(got))
	}
	if !slices.Equal(got, seq(0, n)) {
		t.Fatalf("the first stream read %d messages, not the %d written in order", len(got), n)
	}
	rest, err := readUntil(t, ctx, second, newBatch())
	if err != io.EOF || len(rest) != 0 {
		t.Fatalf("the second stream read %d messages and ended with %v; want none and io.EOF", len(rest), err)
	}
}
