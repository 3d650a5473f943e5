package main

import "github.com/cdclog/cdclog/cdc"

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
// that is also an input (a cdc.InputError, a usage error); nothing
// without a name. No inputs means stdin, as for the commands' FILE
// arguments.
func (s *rejectSink) open(e *env, inputs []string) (err error) {
	if s.name != "" {
		s.f, err = cdc.CreateRejectFile(s.name, inputs, e.stdin)
	}
	return err
}

// close flushes and fsyncs the quarantine file, so that what was
// quarantined is on disk when the command reports success.
func (s *rejectSink) close() error {
	if s == nil {
		return nil
	}
	return s.f.Close()
}
