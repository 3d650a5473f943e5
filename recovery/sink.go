package recovery

import (
	"fmt"
	"github.com/cdclog/cdclog/internal/prealloc"
	"io"
	"os"
)

// Sink is the exactly-once output file. It is an interface so that tests
// can inject write and sync failures, or drop unsynced bytes to simulate a
// power loss.
type Sink interface {
	io.Writer
	// Sync makes everything written so far durable.
	Sync() error
	// Size returns the current length of the file.
	Size() (int64, error)
	// Truncate cuts the file to size and positions writes at its end.
	Truncate(size int64) error
	Close() error
}

// FileSink is a Sink on an os.File. It reserves disk space ahead of the
// file's end (see package prealloc), which makes its fsyncs much cheaper,
// and gives back what is left of the reservation when closed.
type FileSink struct {
	f     *os.File
	size  int64 // the write position: the file's length
	ahead *prealloc.Ahead
}

// OpenFileSink opens (creating it if needed) the output file at path for
// appending.
func OpenFileSink(path string) (*FileSink, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open output file: %w", err)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open output file: %w", err)
	}
	return &FileSink{f: f, size: size, ahead: prealloc.New(f)}, nil
}

// Write appends p to the file.
func (s *FileSink) Write(p []byte) (int, error) {
	s.ahead.Ensure(s.size + int64(len(p)))
	n, err := s.f.Write(p)
	s.size += int64(n)
	return n, err
}

// Sync fsyncs the file.
func (s *FileSink) Sync() error { return s.f.Sync() }

// Size returns the file's length.
func (s *FileSink) Size() (int64, error) {
	fi, err := s.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Truncate cuts the file to size, fsyncs it, and moves the write position
// to the new end.
func (s *FileSink) Truncate(size int64) error {
	if err := s.f.Truncate(size); err != nil {
		return err
	}
	s.ahead.Reset(size) // truncating freed the reservation past size
	if _, err := s.f.Seek(size, io.SeekStart); err != nil {
		return err
	}
	s.size = size
	return s.f.Sync()
}

// Close gives back the space reserved past the end and closes the file. A
// failure to give it back only leaves it reserved (the bytes written are
// intact and synced), so it is not an error of Close.
func (s *FileSink) Close() error {
	_ = s.ahead.Release()
	return s.f.Close()
}
