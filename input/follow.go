package input

import (
	"fmt"
	"io"
	"os"

	"github.com/cdclog/cdclog/cdc"
)

// followReader reads a followed file: at its end it says cdc.ErrPaused,
// unless the file was replaced at its path or cut short, which ends it
// (io.EOF) for the source to reopen.
type followReader struct {
	s *File
}

func (r *followReader) Read(p []byte) (int, error) {
	s := r.s
	n, err := s.f.Read(p)
	s.read += int64(n)
	if n > 0 || err != io.EOF {
		return n, err
	}
	if s.replaced() || s.cut() {
		// Written before it was replaced: read to its very end.
		n, err = s.f.Read(p)
		s.read += int64(n)
		if n > 0 || err != io.EOF {
			return n, err
		}
		return 0, io.EOF
	}
	return 0, cdc.ErrPaused
}

// replaced reports whether another file is at the path now.
func (s *File) replaced() bool {
	at, err := os.Stat(s.abs)
	if err != nil {
		return false // moved away, and no new one yet: wait for it
	}
	open, err := s.f.Stat()
	return err == nil && !os.SameFile(at, open)
}

// cut reports whether the file is shorter than what was read of it.
func (s *File) cut() bool {
	fi, err := s.f.Stat()
	return err == nil && fi.Size() < s.read
}

// reopen goes on with the file now at the path (rotation), or the same
// file from its start (cut short).
func (s *File) reopen() error {
	if s.cut() && !s.replaced() {
		s.log.Info("input was cut short: reading it again from the start", "file", s.path)
		if _, err := s.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("seek %s: %w", s.path, err)
		}
		s.newDecoder()
		return nil
	}
	f, err := os.Open(s.abs)
	if err != nil {
		return fmt.Errorf("open rotated input: %w", err)
	}
	s.f.Close()
	s.f = f
	s.log.Info("input was rotated: reading the new file from its start", "file", s.path)
	s.newDecoder()
	return nil
}
