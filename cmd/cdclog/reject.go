package main

import (
	"errors"

	"github.com/cdclog/cdclog/cdc"
)

// rejectSink is the --quarantine file of the commands that have no
// database (demangle, merge): a cdc.RejectFile that the library code they
// call writes each rejected message to. Without --quarantine it has no
// file, and f is nil.
type rejectSink struct {
	name string
	f    *cdc.RejectFile
}

// openRejectSink checks the --quarantine flag against the policy and
// creates the quarantine file (cdc.CreateRejectFile), refusing one that is
// also an input. No inputs means stdin, as for the commands' FILE
// arguments.
func openRejectSink(e *env, policy cdc.ErrorPolicy, path string, inputs []string) (*rejectSink, error) {
	switch {
	case policy == cdc.Quarantine && path == "":
		return nil, usageError("--on-error quarantine needs --quarantine FILE (there is no database to keep rejected messages in)")
	case policy != cdc.Quarantine && path != "":
		return nil, usageError("--quarantine is only used with --on-error quarantine")
	}
	s := &rejectSink{name: path}
	if path == "" {
		return s, nil
	}
	f, err := cdc.CreateRejectFile(path, inputs, e.stdin)
	var ie *cdc.InputError
	switch {
	case errors.As(err, &ie) && ie.Input == "-":
		return nil, usageError("--quarantine %s is also the input (stdin reads it)", path)
	case errors.As(err, &ie):
		return nil, usageError("--quarantine %s is also an input file (%s)", path, ie.Input)
	case err != nil:
		return nil, withCode(exitFailure, err)
	}
	s.f = f
	return s, nil
}

// close flushes and fsyncs the quarantine file, so that what was
// quarantined is on disk when the command reports success.
func (s *rejectSink) close() error {
	if s == nil || s.f == nil {
		return nil
	}
	return withCode(exitFailure, s.f.Close())
}
