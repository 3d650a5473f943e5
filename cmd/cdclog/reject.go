package main

import (
	"errors"

	"github.com/cdclog/cdclog/cdc"
)

// rejectSink is the --quarantine file of the commands that have no
// database (demangle, merge): a cdc.RejectFile that the library code they
// call writes each rejected message to. It is the Quarantine of their
// options before the file is opened (open), so that the library checks
// those options first (Validate). Without --quarantine it has no name and
// is no Quarantine.
type rejectSink struct {
	name string
	f    *cdc.RejectFile
}

// Write writes r to the opened file.
func (s *rejectSink) Write(r *cdc.Reject) error { return s.f.Write(r) }

// open creates the quarantine file (cdc.CreateRejectFile), refusing one
// that is also an input; nothing without a name. No inputs means stdin,
// as for the commands' FILE arguments.
func (s *rejectSink) open(e *env, inputs []string) error {
	if s.name == "" {
		return nil
	}
	f, err := cdc.CreateRejectFile(s.name, inputs, e.stdin)
	var ie *cdc.InputError
	switch {
	case errors.As(err, &ie) && ie.Input == "-":
		return usageError("--quarantine %s is also the input (stdin reads it)", s.name)
	case errors.As(err, &ie):
		return usageError("--quarantine %s is also an input file (%s)", s.name, ie.Input)
	case err != nil:
		return withCode(exitFailure, err)
	}
	s.f = f
	return nil
}

// close flushes and fsyncs the quarantine file, so that what was
// quarantined is on disk when the command reports success.
func (s *rejectSink) close() error {
	if s == nil || s.f == nil {
		return nil
	}
	return withCode(exitFailure, s.f.Close())
}
