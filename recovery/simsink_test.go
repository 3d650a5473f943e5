package recovery

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
)

// simSink is an output file in memory that knows which of its bytes are
// durable, in the manner of pebble's strict in-memory file system: crash
// keeps what was synced (and, as a disk may, any prefix of what was not),
// so a test can cut the power at any point, not only kill the process.
// It also fails on demand, the way a disk does: a short write, a sync that
// does not happen, a sync that happens but reports an error.
type simSink struct {
	mu     sync.Mutex
	data   []byte // what a reader sees
	synced int    // how much of data is durable
	fault  sinkFault
	// faultAfter counts the writes (for shortWrite) or syncs (lostSync,
	// lateSync) that still succeed before fault strikes; every later one
	// fails too, as a failing disk does.
	faultAfter int
	failing    bool
	closed     bool
}

// sinkFault is the way a simSink fails.
type sinkFault uint8

const (
	noFault sinkFault = iota
	// shortWrite writes part of the bytes, then fails.
	shortWrite
	// lostSync fails a sync without making anything durable.
	lostSync
	// lateSync makes the bytes durable but reports a failure, as when the
	// process dies between the sink's fsync and the database's commit.
	lateSync
)

var errSimIO = &os.PathError{Op: "write", Path: "sim-out", Err: syscall.EIO}

// strike reports whether this write or sync fails.
func (s *simSink) strike() bool {
	if s.fault == noFault {
		return false
	}
	if !s.failing && s.faultAfter > 0 {
		s.faultAfter--
		return false
	}
	s.failing = true
	return true
}

func (s *simSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, os.ErrClosed
	}
	if s.fault == shortWrite && s.strike() {
		n := len(p) / 2
		s.data = append(s.data, p[:n]...)
		return n, errSimIO
	}
	s.data = append(s.data, p...)
	return len(p), nil
}

func (s *simSink) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return os.ErrClosed
	}
	if (s.fault == lostSync || s.fault == lateSync) && s.strike() {
		if s.fault == lateSync {
			s.synced = len(s.data)
		}
		return &os.PathError{Op: "fsync", Path: "sim-out", Err: syscall.EIO}
	}
	s.synced = len(s.data)
	return nil
}

// ReadAt reads what a reader sees, as a file's ReadAt does.
func (s *simSink) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if off >= int64(len(s.data)) {
		return 0, io.EOF
	}
	n := copy(p, s.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (s *simSink) Size() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.data)), nil
}

// Truncate cuts the file and makes the cut durable, as FileSink does.
func (s *simSink) Truncate(size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if size > int64(len(s.data)) {
		return errors.New("sim sink: truncate beyond the end")
	}
	s.data = s.data[:size]
	s.synced = int(size)
	return nil
}

func (s *simSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// crash cuts the power: the file keeps its synced bytes and keep of the
// others (fewer if there are fewer), and works again, without faults.
func (s *simSink) crash(keep int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = s.data[:s.synced+min(keep, len(s.data)-s.synced)]
	s.synced = len(s.data) // what survived a power cut is on the disk
	s.fault, s.failing, s.faultAfter, s.closed = noFault, false, 0, false
}

// reopen makes a closed sink usable again, as opening the file anew.
func (s *simSink) reopen() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = false
}

// bytes returns a copy of what a reader sees.
func (s *simSink) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.data...)
}

// failAfter arms fault to strike after n successful writes and syncs.
func (s *simSink) failAfter(f sinkFault, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault, s.faultAfter, s.failing = f, n, false
}
