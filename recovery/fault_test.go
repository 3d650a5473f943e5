package recovery

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cdclog/cdclog/cdc"
)

// faultySink wraps a FileSink: it fails Sync after syncs successful ones,
// and drops what was written since the last successful sync, as a power
// loss would.
type faultySink struct {
	*FileSink
	syncs   int
	synced  int64
	written int64
}

func (s *faultySink) Write(p []byte) (int, error) {
	n, err := s.FileSink.Write(p)
	s.written += int64(n)
	return n, err
}

func (s *faultySink) Sync() error {
	if s.syncs == 0 {
		return &os.PathError{Op: "fsync", Path: "out", Err: syscall.EIO}
	}
	s.syncs--
	s.synced = s.written
	return s.FileSink.Sync()
}

func (s *faultySink) Truncate(size int64) error {
	s.written, s.synced = size, size
	return s.FileSink.Truncate(size)
}

func TestAnFsyncFailureStopsTheProcessorAndRecoveryIsExact(t *testing.T) {
	dir := t.TempDir()
	path, out := filepath.Join(dir, "state.db"), filepath.Join(dir, "out.jsonl")
	msgs := mangled(31, cleanStream(31, 0, 3000))
	fs, _ := OpenFileSink(out, FileSinkOptions{})
	sink := &faultySink{FileSink: fs, syncs: 3}
	p := openTest(t, path, Options{Sink: sink, SinkName: out, BatchMessages: 400})
	var failedAt int
	for i := 0; i < len(msgs); i += 400 {
		if _, err := p.Append(t.Context(), msgs[i:min(len(msgs), i+400)], nil); err != nil {
			if !errors.Is(err, ErrFailed) {
				t.Fatalf("got %v, want ErrFailed", err)
			}
			failedAt = i
			break
		}
	}
	if failedAt == 0 {
		t.Fatal("the fsync failure went unnoticed")
	}
	if _, err := p.Append(t.Context(), msgs[:1], nil); !errors.Is(err, ErrFailed) {
		t.Fatalf("append after failure: %v", err)
	}
	p.Close()
	// Lose the unsynced bytes, as a power cut would.
	os.Truncate(out, sink.synced)
	fs, _ = OpenFileSink(out, FileSinkOptions{})
	p = openTest(t, path, Options{Sink: fs, SinkName: out})
	appendAll(t, p, msgs[failedAt:], 400)
	p.Close()
	if got, _ := os.ReadFile(out); !bytes.Equal(got, inMemory(t, msgs)) {
		t.Fatal("output after recovery differs from an uninterrupted run")
	}
	_ = cdc.JSONL
}
