package input

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/recovery"
)

// DefaultPoll is how often a followed file at its end is looked at again.
const DefaultPoll = 10 * time.Millisecond

// ErrNotRegular: OpenFile was given a path that is not a regular file (a
// pipe, a device, a directory). Read a pipe or a device with NewStream.
var ErrNotRegular = errors.New("not a regular file")

// FileOptions configure OpenFile. The zero value reads JSON Lines once.
type FileOptions struct {
	// Format is the file's format.
	Format cdc.Format
	// Follow keeps reading as the file grows, and across rotation (see
	// the package documentation): Read never returns io.EOF.
	Follow bool
	// Poll is how often a followed file at its end is looked at again,
	// when nothing woke it sooner (inotify, on Linux); 0 means
	// DefaultPoll.
	Poll time.Duration
	// Logger receives notes about resuming, rotation and unfinished last
	// lines; nil means slog.Default().
	Logger *slog.Logger
}

// File is a recovery.Source over a regular file, resumed from its
// committed cursor when that still describes the file.
type File struct {
	path string // as given, for messages
	abs  string
	o    FileOptions
	log  *slog.Logger

	f    *os.File
	dec  *cdc.Reader
	cur  fileCursor // the head fingerprint; Offset and Line are set per batch
	read int64      // bytes read from f (follow: to see it cut short)
	// rewritten is set when a followed file's last bytes read changed
	// (see followReader): reopen reads it again from its start.
	rewritten bool
	// absent is set while a followed path has no file yet: Read waits
	// for one, and then resumes at pending, the cursor given to Start.
	absent  bool
	pending []byte
	// w wakes a followed file's wait when it is written (nil: polled
	// only; see watcher).
	w *watcher

	ended  error // what ended the input, returned from then on
	closed bool
}

// OpenFile opens the regular file at path. It fails with an error
// wrapping ErrNotRegular for anything else, and with fs.ErrNotExist's
// kind for a missing file, unless following: a followed path with no
// file yet is waited for, like tail -F (the log says so once), and the
// file read from its start once it appears.
//
// A file that is not followed holds no file descriptor until Start: it is
// opened here to be checked, closed, and opened again by Start, so that
// a list of many files (ingest of thousands) holds one open file at a
// time, however low the limit on open files.
func OpenFile(path string, o FileOptions) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", path, err)
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &File{path: path, abs: abs, o: o, log: o.Logger}
	if o.Follow {
		w, err := newWatcher(abs)
		if err != nil {
			s.log.Debug("following by polling alone", "file", path, "err", err)
		}
		s.w = w
	}
	if err := s.open(); err != nil {
		if !s.waits(err) {
			s.Close()
			return nil, err
		}
		s.absent = true
		s.log.Info("input does not exist yet: waiting for it to appear", "file", s.path)
		return s, nil
	}
	if !o.Follow {
		s.f.Close()
		s.f, s.dec = nil, nil
	}
	return s, nil
}

// open opens the file at the path, a regular one, to be read from its
// start, unless it is open already.
func (s *File) open() error {
	switch {
	case s.f != nil:
		return nil
	case s.closed:
		return fmt.Errorf("input %s: %w", s.path, os.ErrClosed)
	}
	f, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("open input: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open input: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("input %s: %w", s.path, ErrNotRegular)
	}
	s.f = f
	if s.w != nil {
		s.w.follow(f) // before the first read: every later write wakes a wait
	}
	s.newDecoder()
	return nil
}

// waits reports whether err, from open, is a followed path with no file
// yet (or no directory), which Read waits for.
func (s *File) waits(err error) bool {
	return s.o.Follow && errors.Is(err, fs.ErrNotExist)
}

// newDecoder starts decoding the open file from its start.
func (s *File) newDecoder() {
	var r io.Reader = s.f
	if s.o.Follow {
		r = &followReader{s: s}
	}
	s.dec = cdc.NewReader(r, s.o.Format, s.path)
	if !s.o.Follow {
		// Another program may still be appending to it.
		s.dec.HoldUnfinished()
	}
	s.cur, s.read = fileCursor{}, 0
}

// Name is "input:" and the file's absolute path: its cursor's name.
func (s *File) Name() string { return "input:" + s.abs }

// Label is the path as given.
func (s *File) Label() string { return s.path }

// Offset returns how far the file has been read, in bytes.
func (s *File) Offset() int64 {
	if s.dec == nil {
		return 0 // not started
	}
	return s.dec.Offset()
}

// Size returns the file's current length (for progress), or -1.
func (s *File) Size() int64 {
	if s.f == nil {
		fi, err := os.Stat(s.path) // not started
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	fi, err := s.f.Stat()
	if err != nil {
		return -1
	}
	return fi.Size()
}

// Start resumes at the committed cursor when the file still holds what it
// describes; otherwise the file is read from its start, and the log says
// why.
//
// A followed file that does not exist yet keeps cursor for when it
// appears (see Read).
func (s *File) Start(_ context.Context, cursor []byte) error {
	if err := s.open(); err != nil {
		if s.waits(err) {
			s.absent, s.pending = true, cursor
			return nil
		}
		return s.end(err)
	}
	return s.resume(cursor)
}

// resume positions the open file at cursor, when it still describes it.
func (s *File) resume(cursor []byte) error {
	if cursor == nil {
		return nil
	}
	var prev fileCursor
	if json.Unmarshal(cursor, &prev) != nil {
		s.log.Info("input cursor unreadable; reading the input from the start (what was committed is dropped as duplicates)", "file", s.path)
		return nil
	}
	fi, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", s.path, err)
	}
	if !prev.matches(s.f, fi.Size()) {
		s.log.Info("input changed since it was last ingested; reading it from the start (what was committed is dropped as duplicates)", "file", s.path)
		return nil
	}
	if _, err := s.f.Seek(prev.Offset, io.SeekStart); err != nil {
		return fmt.Errorf("seek %s: %w", s.path, err)
	}
	line, err := s.resumeLine(prev)
	if err != nil {
		return err
	}
	s.dec.Resume(prev.Offset, line)
	s.cur, s.read = prev, prev.Offset
	switch {
	case prev.Offset == fi.Size() && !s.o.Follow:
		s.log.Info("input already ingested", "file", s.path, "bytes", fi.Size())
	case prev.Offset > 0 && s.o.Format == cdc.JSONL:
		s.log.Info("resuming input", "file", s.path, "offset", prev.Offset, "line", line+1)
	case prev.Offset > 0:
		s.log.Info("resuming input", "file", s.path, "offset", prev.Offset) // msgpack has no lines
	}
	return nil
}

// resumeLine is the number of lines before the cursor's offset. A cursor
// that stops after a whole last line without its line end (see the package
// documentation) counted that line, whose line end, when it comes, is the
// first byte the resumed decoder reads: it counts again as a line then,
// so the resumed count starts one lower.
func (s *File) resumeLine(c fileCursor) (int64, error) {
	if s.o.Format != cdc.JSONL || c.Offset == 0 || c.Line == 0 {
		return c.Line, nil
	}
	var last [1]byte
	if _, err := s.f.ReadAt(last[:], c.Offset-1); err != nil {
		return 0, fmt.Errorf("read %s: %w", s.path, err)
	}
	if last[0] != '\n' {
		return c.Line - 1, nil
	}
	return c.Line, nil
}

// Read fills b from the file. It returns io.EOF at the file's end, unless
// following; then it waits for more (returning as soon as b holds
// something), until ctx ends.
func (s *File) Read(ctx context.Context, b *recovery.SourceBatch) error {
	if s.ended != nil {
		return s.ended
	}
	if err := s.appear(ctx); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err // nothing is lost: a file can be read again
		}
		err := fill(s.dec, b)
		switch {
		case err == nil:
			return s.mark(b, nil)
		case errors.Is(err, cdc.ErrPaused): // following, at the end
			if b.Len() > 0 {
				return s.mark(b, nil)
			}
			if err := s.wait(ctx); err != nil {
				return err
			}
		case err == io.EOF && s.o.Follow: // rotated or cut short
			if merr := s.mark(b, nil); merr != nil {
				return merr
			}
			if err := s.reopen(); err != nil {
				return s.end(err)
			}
			if b.Len() > 0 {
				return nil
			}
		case err == io.EOF:
			return s.end(s.mark(b, io.EOF))
		case errors.Is(err, cdc.ErrUnfinished):
			s.log.Warn("the input's last line has no line end and its JSON is cut short: left unread, for a rerun once it is complete (or --follow)",
				"file", s.path, "offset", s.dec.Offset())
			return s.end(s.mark(b, io.EOF))
		default:
			var de *cdc.DecodeError
			if !errors.As(err, &de) {
				err = fmt.Errorf("read %s: %w", s.path, err)
			}
			return s.end(s.mark(b, err))
		}
	}
}

// appear opens the file, unless it is open (Read before Start); a
// followed path with no file yet is waited for, until ctx ends, and the
// file found there then resumed at the cursor given to Start.
func (s *File) appear(ctx context.Context) error {
	for {
		err := s.open()
		switch {
		case err == nil && s.absent:
			s.absent = false
			s.log.Info("input appeared: reading it", "file", s.path)
			cursor := s.pending
			s.pending = nil
			if err := s.resume(cursor); err != nil {
				return s.end(err)
			}
			return nil
		case err == nil:
			return nil
		case !s.waits(err):
			return s.end(err)
		}
		s.absent = true
		if err := s.wait(ctx); err != nil {
			return err
		}
	}
}

// end records what ended the input.
func (s *File) end(err error) error {
	s.ended = err
	return err
}

// mark sets b's cursor: where the input stands after b, or before the
// message err stopped at. It returns err, or the error of reading the
// file for the fingerprints.
func (s *File) mark(b *recovery.SourceBatch, err error) error {
	offset, line := resumeAt(s.dec, err)
	c := s.cur
	c.Offset, c.Line = offset, line
	if n := min(offset, headSize); c.HeadLen < n {
		sum, herr := crcRange(s.f, 0, n)
		if herr != nil {
			return fmt.Errorf("read %s: %w", s.path, herr)
		}
		c.HeadLen, c.HeadCRC = n, sum
		s.cur.HeadLen, s.cur.HeadCRC = n, sum
	}
	sum, terr := tailCRC(s.f, offset)
	if terr != nil {
		return fmt.Errorf("read %s: %w", s.path, terr)
	}
	c.TailCRC = sum
	b.Cursor = c.marshal()
	return err
}

// wait sleeps for the poll interval, or until ctx ends; with a watcher,
// only until the file is written or one appears at the path.
func (s *File) wait(ctx context.Context) error {
	if s.w != nil {
		err := s.w.wait(ctx, s.o.Poll)
		if err == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		s.log.Debug("file change notification failed: polling", "file", s.path, "err", err)
		s.w.close()
		s.w = nil
	}
	t := time.NewTimer(s.o.Poll)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the file.
func (s *File) Close() error {
	s.closed = true
	if s.w != nil {
		s.w.close()
		s.w = nil
	}
	if s.f == nil {
		return nil // never started
	}
	return s.f.Close()
}
