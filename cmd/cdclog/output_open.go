package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cdclog/cdclog/recovery"
)

// openOutput sets up where ingest writes the clean stream, in opts:
//
//   - a regular file (--out FILE): the exactly-once sink, locked while
//     ingest runs, checked against the database before anything is
//     written or cut (recovery.OpenFileSink and Open);
//   - stdout (no --out, "-", /dev/stdout, /dev/fd/1, /proc/self/fd/1), or
//     any --out that is not a regular file (a pipe, a device, /dev/null,
//     another file descriptor): a stream, never cut or checked, written at
//     least once (recovery.Options.Live).
//
// It returns the function to call once the processor is closed, or with
// opened false when it could not be opened: that one also removes an
// output file that openOutput created, so that a failed run leaves no
// trace.
func openOutput(e *env, out string, lockTimeout time.Duration, opts *recovery.Options) (done func(opened bool), err error) {
	if out == "" || isStdout(out) {
		setStream(opts, e, e.stdout)
		return func(bool) {}, nil
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, withCode(exitFailure, err)
	}
	sink, err := recovery.OpenFileSink(abs, recovery.FileSinkOptions{LockTimeout: lockTimeout})
	if errors.Is(err, recovery.ErrSinkStream) {
		return openStream(e, out, opts)
	}
	if err != nil {
		return nil, withCode(exitFailure, err)
	}
	opts.Sink, opts.SinkName, opts.SinkFormat = sink, abs, e.outFormat
	return func(opened bool) {
		if opened {
			return // Close of the processor closed the sink
		}
		size, _ := sink.Size()
		sink.Close()
		if sink.Created() && size == 0 {
			os.Remove(abs)
		}
	}, nil
}

// isStdout reports whether the --out name means ingest's own stdout.
func isStdout(out string) bool {
	switch filepath.Clean(out) {
	case "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// openStream opens a path that is not a regular file for writing, as a
// stream. O_APPEND: a file descriptor that leads to a file (/dev/fd/3)
// must not be written from its start.
func openStream(e *env, out string, opts *recovery.Options) (func(bool), error) {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, withCode(exitFailure, fmt.Errorf("open output stream: %w", err))
	}
	e.log.Debug("--out is not a regular file: written as a stream, at least once", "out", out)
	setStream(opts, e, f)
	return func(bool) { f.Close() }, nil
}

// setStream makes w the live output. When w is the process's stdout, a
// reader that goes away (cdclog ingest ... | head) must give a write error
// that ingest reports, not the SIGPIPE that the Go runtime otherwise
// kills the process with on fd 1.
func setStream(opts *recovery.Options, e *env, w io.Writer) {
	if w == io.Writer(os.Stdout) {
		signal.Ignore(syscall.SIGPIPE)
	}
	opts.Live, opts.LiveFormat = w, e.outFormat
}
