package main

import (
	"fmt"
	"os"

	"github.com/cdclog/cdclog/cdc"
)

// rejectSink applies --on-error skip or quarantine for the commands that
// have no database: it counts each rejected message, reports it on stderr,
// and under quarantine writes it to a JSON Lines file (cdc.RejectWriter).
type rejectSink struct {
	e     *env
	name  string
	file  *os.File
	w     *cdc.RejectWriter
	count uint64
}

// openRejectSink checks the --quarantine flag against the policy and
// creates the quarantine file, refusing one that is also an input (creating
// it would empty that input).
func openRejectSink(e *env, policy cdc.ErrorPolicy, path string, inputs []string) (*rejectSink, error) {
	switch {
	case policy == cdc.Quarantine && path == "":
		return nil, usageError("--on-error quarantine needs --quarantine FILE (there is no database to keep rejected messages in)")
	case policy != cdc.Quarantine && path != "":
		return nil, usageError("--quarantine is only used with --on-error quarantine")
	}
	s := &rejectSink{e: e, name: path}
	if path == "" {
		return s, nil
	}
	if err := checkNotAnInput(path, inputs); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, withCode(exitFailure, fmt.Errorf("quarantine file: %w", err))
	}
	s.file, s.w = f, cdc.NewRejectWriter(f)
	return s, nil
}

// checkNotAnInput refuses a quarantine file that is one of the inputs
// ("-" being stdin): creating it would truncate that input.
func checkNotAnInput(quarantine string, inputs []string) error {
	q, err := os.Stat(quarantine)
	if err != nil {
		return nil // does not exist yet: cannot be an input
	}
	for _, in := range inputs {
		var fi os.FileInfo
		if in == "" || in == "-" {
			fi, err = os.Stdin.Stat()
		} else {
			fi, err = os.Stat(in)
		}
		if err == nil && os.SameFile(q, fi) {
			return usageError("--quarantine %s is also an input file", quarantine)
		}
	}
	return nil
}

// add counts and reports one rejected message, and writes it to the
// quarantine file if there is one.
func (s *rejectSink) add(rj *cdc.Reject) error {
	s.count++
	s.e.log.Warn("rejected input", "error", rj.String())
	if s.w == nil {
		return nil
	}
	if err := s.w.Write(rj); err != nil {
		return withCode(exitFailure, fmt.Errorf("%s: %w", s.name, err))
	}
	return nil
}

// Write writes one reject to the quarantine file without reporting it, for
// library code that reports rejects itself (ordering.MergeJSONL).
func (s *rejectSink) Write(rj *cdc.Reject) error {
	s.count++
	if err := s.w.Write(rj); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}

// close flushes and fsyncs the quarantine file, so that what was
// quarantined is on disk when the command reports success.
func (s *rejectSink) close() error {
	if s == nil || s.file == nil {
		return nil
	}
	err := s.w.Close()
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	s.file = nil
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("%s: %w", s.name, err))
	}
	return nil
}
