package recovery

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cdclog/cdclog/cdc"
)

// OutputPath is the output that OpenOutput set a processor up to write:
// the exactly-once file sink, or a stream.
type OutputPath struct {
	sink   *FileSink // nil for a stream
	abs    string    // the sink's absolute path
	stream *os.File  // nil for a sink, and for stdout
	stdout bool      // the output is the caller's stdout, not closed here
}

// IsStdout reports whether path, given to OpenOutput, names the
// process's own standard output: "" (no path), "-", /dev/stdout,
// /dev/fd/1 or /proc/self/fd/1, in any form filepath.Clean reduces to
// one of them.
func IsStdout(path string) bool {
	if path == "" {
		return true
	}
	switch filepath.Clean(path) {
	case "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// OutputConflictError is CheckOutput's refusal of an output path that
// names a file the run reads: the database (Database), or Input, one of
// the inputs as given.
type OutputConflictError struct {
	Path     string // the output path, as given
	Database bool   // the output is the database
	Input    string // else the input it is
}

// Error words the conflict as the command line's --out.
func (e *OutputConflictError) Error() string {
	if e.Database {
		return fmt.Sprintf("--out %s is the database (--db): give the output a file of its own", e.Path)
	}
	return fmt.Sprintf("--out %s is also an input: give the output a file of its own", e.Path)
}

// CheckOutput refuses, as an *OutputConflictError, an output path for
// OpenOutput that names the database at db or one of the named inputs:
// the database would be locked against itself, and an input refused as a
// file the database did not write. Two paths name one file when both
// exist and are the same file (os.SameFile: a link or another spelling),
// or else when their absolute paths are equal. "" and "-" (stdout) are
// never refused; an input that is not a path (a broker URL, "-") matches
// no output.
func CheckOutput(path, db string, inputs []string) error {
	if path == "" || path == "-" {
		return nil
	}
	if samePath(path, db) {
		return &OutputConflictError{Path: path, Database: true}
	}
	for _, in := range inputs {
		if samePath(path, in) {
			return &OutputConflictError{Path: path, Input: in}
		}
	}
	return nil
}

// samePath reports whether a and b name one file: the same file when
// both exist, else the same absolute path.
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// OpenOutput sets o up to write the clean stream, in format, to the file
// at path, as `cdclog ingest --out PATH` does:
//
//   - a path that names stdout (IsStdout) is the stream stdout (nil means
//     os.Stdout), o.Live and o.LiveFormat: never cut or checked, written
//     at least once, and not closed by Close or Abort;
//   - a regular file (or a path where none is yet) is the exactly-once
//     sink (OpenFileSink, waiting up to lockTimeout for another process's
//     lock): o.Sink, o.SinkName (its absolute path) and o.SinkFormat, so
//     that Open checks it against the database before it writes or cuts
//     anything;
//   - any other path that can be written (a pipe, a device such as
//     /dev/null, a file descriptor such as /dev/fd/3; see ErrSinkStream)
//     is a stream, o.Live and o.LiveFormat: never cut or checked, written
//     at least once. It is opened for appending, so that a descriptor
//     that leads to a file is not written from its start.
//
// Once the processor is closed, call Close; when Open failed, Abort.
func OpenOutput(path string, format cdc.Format, lockTimeout time.Duration, stdout io.Writer, o *Options) (*OutputPath, error) {
	if IsStdout(path) {
		if stdout == nil {
			stdout = os.Stdout
		}
		o.Live, o.LiveFormat = stdout, format
		return &OutputPath{stdout: true}, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	sink, err := OpenFileSink(abs, FileSinkOptions{LockTimeout: lockTimeout})
	if errors.Is(err, ErrSinkStream) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, fmt.Errorf("open output stream: %w", err)
		}
		o.Live, o.LiveFormat = f, format
		return &OutputPath{stream: f}, nil
	}
	if err != nil {
		return nil, err
	}
	o.Sink, o.SinkName, o.SinkFormat = sink, abs, format
	return &OutputPath{sink: sink, abs: abs}, nil
}

// Stream reports whether the output is a stream rather than the
// exactly-once sink: stdout, or another file that is not a regular one.
func (p *OutputPath) Stream() bool { return p.stream != nil || p.stdout }

// Close closes a stream other than stdout once the processor is closed.
// The processor's Close closes the sink itself. A nil OutputPath (no
// output) does nothing.
func (p *OutputPath) Close() error {
	if p != nil && p.stream != nil {
		return p.stream.Close()
	}
	return nil
}

// Abort closes the output of a processor that did not open, and removes
// the file if OpenOutput created it and nothing was written, so that a
// failed run leaves no trace. Stdout stays open; a nil OutputPath does
// nothing.
func (p *OutputPath) Abort() {
	switch {
	case p == nil || p.stdout:
		return
	case p.stream != nil:
		p.stream.Close()
		return
	}
	size, _ := p.sink.Size()
	p.sink.Close()
	if p.sink.Created() && size == 0 {
		os.Remove(p.abs)
	}
}
