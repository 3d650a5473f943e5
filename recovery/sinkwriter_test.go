package recovery

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestTheSinkWriterNeverWritesPastTheDurableLimit(t *testing.T) {
	s := openSink(t, filepath.Join(t.TempDir(), "out"))
	defer s.Close()
	w := newSinkWriter(s, 0, 10)
	defer w.close()
	first := w.write([]byte("0123456789"))
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	second := w.write([]byte("abcde"))
	select {
	case err := <-second:
		t.Fatalf("wrote past the limit: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if size, _ := s.Size(); size != 10 {
		t.Fatalf("the file has %d bytes, the limit is 10", size)
	}
	w.setLimit(15)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if size, _ := s.Size(); size != 15 {
		t.Fatalf("the file has %d bytes after the limit was raised to 15", size)
	}
}

func TestAStoppedSinkWriterFailsTheWriteThatWaitsForTheLimit(t *testing.T) {
	s := openSink(t, filepath.Join(t.TempDir(), "out"))
	defer s.Close()
	w := newSinkWriter(s, 0, 4)
	defer w.close()
	waiting := w.write([]byte("too long"))
	later := w.write([]byte("x"))
	stop := errors.New("processor failed")
	time.AfterFunc(20*time.Millisecond, func() { w.stop(stop) })
	for _, done := range []chan error{waiting, later} {
		select {
		case err := <-done:
			if !errors.Is(err, stop) {
				t.Fatalf("got %v, want the stop error", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a write waiting for the limit hangs after stop")
		}
	}
	if size, _ := s.Size(); size != 0 {
		t.Fatalf("the file has %d bytes", size)
	}
}
