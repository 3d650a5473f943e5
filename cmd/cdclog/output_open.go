package main

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/cdclog/cdclog/recovery"
)

// openOutput sets up where ingest writes the clean stream, in opts
// (recovery.OpenOutput): stdout without --out or when --out names it, a
// regular file as the exactly-once sink, anything else a stream. Once
// the processor is closed, call Close on what it returns; when the
// processor could not be opened, Abort, which removes an output file
// that openOutput created, so that a failed run leaves no trace.
func openOutput(e *env, out string, opts *recovery.Options) (*recovery.OutputPath, error) {
	o, err := recovery.OpenOutput(out, e.outFormat, opts.LockTimeout, e.stdout, opts)
	switch {
	case err != nil:
		return nil, withCode(exitFailure, err)
	case opts.Live == io.Writer(os.Stdout):
		// A reader that goes away (cdclog ingest ... | head) must give a
		// write error that ingest reports, not the SIGPIPE that the Go
		// runtime otherwise kills the process with on fd 1.
		signal.Ignore(syscall.SIGPIPE)
	case o.Stream() && !recovery.IsStdout(out):
		e.log.Debug("--out is not a regular file: written as a stream, at least once", "out", out)
	}
	return o, nil
}
