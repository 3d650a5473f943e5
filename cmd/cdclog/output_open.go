package main

import (
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/cdclog/cdclog/recovery"
)

// openOutput sets up where ingest writes the clean stream, in opts:
//
//   - stdout (no --out, "-", /dev/stdout, /dev/fd/1, /proc/self/fd/1): a
//     stream, never cut or checked, written at least once
//     (recovery.Options.Live);
//   - any other --out (recovery.OpenOutput): a regular file is the
//     exactly-once sink, locked while ingest runs, checked against the
//     database before anything is written or cut; anything else (a pipe,
//     a device, /dev/null, another file descriptor) a stream too.
//
// It returns the function to call once the processor is closed, or with
// opened false when it could not be opened: that one also removes an
// output file that openOutput created, so that a failed run leaves no
// trace.
func openOutput(e *env, out string, opts *recovery.Options) (done func(opened bool), err error) {
	if out == "" || isStdout(out) {
		setStream(opts, e, e.stdout)
		return func(bool) {}, nil
	}
	o, err := recovery.OpenOutput(out, e.outFormat, opts.LockTimeout, opts)
	if err != nil {
		return nil, withCode(exitFailure, err)
	}
	if o.Stream() {
		e.log.Debug("--out is not a regular file: written as a stream, at least once", "out", out)
	}
	return func(opened bool) {
		if opened {
			o.Close()
		} else {
			o.Abort()
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
