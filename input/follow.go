package input

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/cdclog/cdclog/cdc"
)

// followReader reads a followed file: at its end it says cdc.ErrPaused,
// unless the file was replaced at its path or cut short, which ends it
// (io.EOF) for the source to reopen. A file cut and written again past
// what was read between two polls is not shorter: the last bytes read
// are kept and, after each pause, read again at their place; when they
// differ the file was rewritten and is read again from its start, as if
// it had been cut.
type followReader struct {
	s      *File
	paused bool
	tail   []byte // the last bytes read, up to followTail
	again  [followTail]byte
}

// followTail is how many of the last bytes read a followed file keeps to
// see it rewritten.
const followTail = 64

func (r *followReader) Read(p []byte) (int, error) {
	s := r.s
	if r.paused {
		r.paused = false
		if r.rewritten() {
			s.rewritten = true
			return 0, io.EOF
		}
	}
	n, err := s.f.Read(p)
	s.read += int64(n)
	r.keep(p[:n])
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
	r.paused = true
	return 0, cdc.ErrPaused
}

// keep remembers the last followTail bytes read, b being the latest.
func (r *followReader) keep(b []byte) {
	if len(b) >= followTail {
		r.tail = append(r.tail[:0], b[len(b)-followTail:]...)
		return
	}
	r.tail = append(r.tail, b...)
	if over := len(r.tail) - followTail; over > 0 {
		r.tail = append(r.tail[:0], r.tail[over:]...)
	}
}

// rewritten reports whether the bytes last read are no longer where they
// were. A file now shorter than them is left to cut.
func (r *followReader) rewritten() bool {
	if len(r.tail) == 0 {
		return false
	}
	buf := r.again[:len(r.tail)] // read at every poll: not allocated
	n, err := r.s.f.ReadAt(buf, r.s.read-int64(len(buf)))
	if n < len(buf) || err != nil && err != io.EOF {
		return false
	}
	return !bytes.Equal(buf, r.tail)
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
	if (s.cut() || s.rewritten) && !s.replaced() {
		if s.rewritten {
			s.log.Info("input was rewritten: reading it again from the start (what was committed is dropped as duplicates)", "file", s.path)
		} else {
			s.log.Info("input was cut short: reading it again from the start", "file", s.path)
		}
		s.rewritten = false
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
	if s.w != nil {
		s.w.follow(f)
	}
	s.log.Info("input was rotated: reading the new file from its start", "file", s.path)
	s.newDecoder()
	return nil
}
