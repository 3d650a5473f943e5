package recovery

import (
	"fmt"
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

// FileSink is a Sink on an os.File.
type FileSink struct {
	f *os.File
}

// OpenFileSink opens (creating it if needed) the output file at path for
// appending.
func OpenFileSink(path string) (*FileSink, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open output file: %w", err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, fmt.Errorf("open output file: %w", err)
	}
	return &FileSink{f: f}, nil
}

// Write appends p to the file.
func (s *FileSink) Write(p []byte) (int, error) { return s.f.Write(p) }

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
	if _, err := s.f.Seek(size, io.SeekStart); err != nil {
		return err
	}
	return s.f.Sync()
}

// Close closes the file.
func (s *FileSink) Close() error { return s.f.Close() }
