package recovery

import (
	"errors"
	"hash/crc32"
	"syscall"
	"testing"
	"time"
)

func TestTheSinkWritersDurableMarkFollowsItsFsyncs(t *testing.T) {
	s := &simSink{}
	w := newSinkWriter(s, sinkMark{next: 1})
	chain := streamChain{at: true, frontier: 7}
	if err := w.write([]byte("0123456789"), 3, chain); err != nil {
		t.Fatal(err)
	}
	if err := w.write([]byte("abcde"), 5, streamChain{at: true, frontier: 9}); err != nil {
		t.Fatal(err)
	}
	if string(s.data) != "0123456789abcde" {
		t.Fatalf("written before write returned: %q", s.data)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	var m sinkMark
	w.durableMark(&m)
	want := crc32.Checksum([]byte("0123456789abcde"), sinkCRCTable)
	if m.size != 15 || m.next != 5 || m.chain.frontier != 9 || m.crc != want || string(m.tail.b) != "0123456789abcde" {
		t.Fatalf("durable mark %+v, want size 15, next 5, frontier 9, crc %08x", m, want)
	}
	if s.synced != 15 {
		t.Fatalf("%d bytes synced at close, want 15", s.synced)
	}
}

func TestAFailedFsyncStopsTheSinkWriterAndLeavesItsMarkBehind(t *testing.T) {
	s := &simSink{fault: lostSync}
	w := newSinkWriter(s, sinkMark{next: 1})
	failed := make(chan error, 1)
	w.failed = func(err error) { failed <- err }
	if err := w.write([]byte("abc"), 2, streamChain{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-failed:
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("failed with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a failed fsync was not reported")
	}
	if err := w.write([]byte("d"), 3, streamChain{}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("a write after a failed fsync: %v", err)
	}
	if err := w.close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("close: %v", err)
	}
	var m sinkMark
	w.durableMark(&m)
	if m.size != 0 || m.next != 1 {
		t.Fatalf("durable mark %+v after a failed fsync", m)
	}
}

func TestAStoppedSinkWriterFailsEveryLaterWrite(t *testing.T) {
	s := &simSink{}
	w := newSinkWriter(s, sinkMark{next: 1})
	stop := errors.New("processor failed")
	w.stop(stop)
	if err := w.write([]byte("x"), 2, streamChain{}); !errors.Is(err, stop) {
		t.Fatalf("got %v, want the stop error", err)
	}
	w.close()
	if len(s.data) != 0 {
		t.Fatalf("the file has %d bytes", len(s.data))
	}
}
