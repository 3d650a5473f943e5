package input_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/demangle"
	"github.com/cdclog/cdclog/input"
	"github.com/cdclog/cdclog/recovery"
)

// The library ingest loop, Processor.Ingest, over this package's sources.

// times returns a complete CDC stream for times from..to-1: each time one
// update and a progress statement counting it.
func times(from, to int) string {
	var b strings.Builder
	for t := from; t < to; t++ {
		fmt.Fprintf(&b, `{"update":{"data":"k%d","time":%d,"diff":1}}`+"\n", t, t)
		fmt.Fprintf(&b, `{"progress":{"lower":%d,"upper":%d,"counts":[{"time":%d,"count":1}]}}`+"\n", t, t+1, t)
	}
	return b.String()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func open(t *testing.T, o recovery.Options) *recovery.Processor {
	t.Helper()
	o.Logger = quiet()
	p, err := recovery.Open(filepath.Join(t.TempDir(), "state.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// waitUntil polls cond for up to d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

func TestIngestCommitsWhatAPausingProducerWroteWithoutWaitingForMore(t *testing.T) {
	p := open(t, recovery.Options{})
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() {
		_, err := p.Ingest(context.Background(), input.NewStream(pr, cdc.JSONL, "pipe", quiet()), recovery.IngestOptions{})
		done <- err
	}()
	for round := range 5 {
		io.WriteString(pw, times(round*3, round*3+3))
		// The producer pauses: the three times are released.
		waitUntil(t, 5*time.Second, fmt.Sprintf("round %d released", round), func() bool {
			f, _ := p.Frontier()
			return f == uint64(round*3+3)
		})
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestIngestStoppedByItsContextCommitsEverythingItRead(t *testing.T) {
	p := open(t, recovery.Options{})
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var res recovery.IngestResult
	go func() {
		var err error
		res, err = p.Ingest(ctx, input.NewStream(pr, cdc.JSONL, "pipe", quiet()), recovery.IngestOptions{})
		done <- err
	}()
	// When Write returns, the source has taken the bytes from the pipe.
	io.WriteString(pw, times(0, 5000))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Ingest returned %v, want the context's error", err)
	}
	if res.Read != 10000 || res.Committed.Accepted != 10000 {
		t.Fatalf("read %d, committed %d accepted; want 10000 each", res.Read, res.Committed.Accepted)
	}
	if f, _ := p.Frontier(); f != 5000 {
		t.Fatalf("frontier %d, want 5000", f)
	}
}

func TestCloseStopsARunningIngest(t *testing.T) {
	p := open(t, recovery.Options{})
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() {
		_, err := p.Ingest(context.Background(), input.NewStream(pr, cdc.JSONL, "pipe", quiet()), recovery.IngestOptions{})
		done <- err
	}()
	io.WriteString(pw, times(0, 10))
	waitUntil(t, 5*time.Second, "first times released", func() bool { f, _ := p.Frontier(); return f == 10 })
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-done:
		if !errors.Is(err, recovery.ErrClosed) {
			t.Fatalf("Ingest returned %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop Ingest")
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

func TestIngestOfAFinishedFileIsNotHeldBackByTheBatchDelay(t *testing.T) {
	const delay = 20 * time.Second
	p := open(t, recovery.Options{BatchDelay: delay})
	path := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(path, []byte(times(0, 2)), 0o644)
	f, err := input.OpenFile(path, input.FileOptions{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := p.Ingest(context.Background(), f, recovery.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= delay/2 {
		t.Fatalf("a 4-line file took %v with a batch delay of %v", took, delay)
	}
}

func TestIngestResumesAFileAfterWhatItCommitted(t *testing.T) {
	dir := t.TempDir()
	db, path := filepath.Join(dir, "state.db"), filepath.Join(dir, "in.jsonl")
	os.WriteFile(path, []byte(times(0, 100)), 0o644)
	ingest := func() recovery.IngestResult {
		t.Helper()
		p, err := recovery.Open(db, recovery.Options{Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		f, err := input.OpenFile(path, input.FileOptions{Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Ingest(context.Background(), f, recovery.IngestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := ingest(); res.Read != 200 {
		t.Fatalf("first run read %d", res.Read)
	}
	if res := ingest(); res.Read != 0 {
		t.Fatalf("rerun on the finished file read %d", res.Read)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(times(100, 110))
	f.Close()
	if res := ingest(); res.Read != 20 || res.Committed.Accepted != 20 {
		t.Fatalf("after growth: read %d, accepted %d", res.Read, res.Committed.Accepted)
	}
}

func TestIngestStopsAtAViolationWithEverythingBeforeItCommitted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.jsonl")
	three := strings.SplitAfter(times(3, 4), "\n")
	before := times(0, 3) + three[0]                            // up to time 3's update
	bad := `{"update":{"data":"k3","time":3,"diff":-1}}` + "\n" // another diff for it
	os.WriteFile(path, []byte(before+bad+three[1]+times(4, 6)), 0o644)
	p := open(t, recovery.Options{})
	f, err := input.OpenFile(path, input.FileOptions{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	// One message a read: the requests after the bad one are in flight
	// when it fails, and must not commit.
	res, err := p.Ingest(context.Background(), f, recovery.IngestOptions{ReadMessages: 1})
	if !demangle.IsViolation(err) {
		t.Fatalf("got %v, want a violation", err)
	}
	if res.Committed.Accepted != 7 {
		t.Fatalf("accepted %d, want the 7 messages before the violation", res.Committed.Accepted)
	}
	var c struct{ Offset int64 }
	if err := jsonUnmarshal(p.Cursor(f.Name()), &c); err != nil || c.Offset != int64(len(before)) {
		t.Fatalf("cursor at %d (%v), want %d: just before the bad message", c.Offset, err, len(before))
	}
}

func TestIngestHonoursOneMessageATransaction(t *testing.T) {
	p := open(t, recovery.Options{BatchMessages: 1})
	path := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(path, []byte(times(0, 20)), 0o644)
	f, err := input.OpenFile(path, input.FileOptions{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ingest(context.Background(), f, recovery.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := p.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.WAL.Chunks != 40 {
		t.Fatalf("%d WAL chunks for 40 messages at one message a commit", st.WAL.Chunks)
	}
}

func TestIngestOfAMissingSourceFailsBeforeAnything(t *testing.T) {
	_, err := input.Open(filepath.Join(t.TempDir(), "nope.jsonl"), input.FileOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}
