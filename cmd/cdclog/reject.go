package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cdclog/cdclog/cdc"
	"github.com/cdclog/cdclog/store"
)

// rejectSink is the --quarantine file of the commands that have no
// database (demangle, merge): a JSON Lines file (cdc.RejectWriter) that
// the library code they call writes each rejected message to. Without
// --quarantine it has no file, and w is nil.
type rejectSink struct {
	name string
	file *os.File
	w    *cdc.RejectWriter
}

// openRejectSink checks the --quarantine flag against the policy and
// creates the quarantine file, refusing one that is also an input (creating
// it would empty that input). No inputs means stdin, as for the commands'
// FILE arguments.
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
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	if err := checkNotAnInput(path, inputs, e.stdin); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, withCode(exitFailure, fmt.Errorf("quarantine file: %w", err))
	}
	// The writer fsyncs the file on Close; its directory entry must be
	// durable too, or a power loss can drop a file the run reported.
	if err := store.SyncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, withCode(exitFailure, fmt.Errorf("quarantine file: %w", err))
	}
	s.file, s.w = f, cdc.NewRejectWriter(f)
	return s, nil
}

// checkNotAnInput refuses a quarantine file that is one of the inputs
// ("-" or "" being stdin), however it is reached (a symbolic or hard link
// is the same file to os.SameFile): creating it would truncate that input.
func checkNotAnInput(quarantine string, inputs []string, stdin io.Reader) error {
	q, err := os.Stat(quarantine)
	if err != nil {
		return nil // does not exist yet: cannot be an input
	}
	for _, in := range inputs {
		fi, err := statInput(in, stdin)
		switch {
		case err != nil || !os.SameFile(q, fi):
		case in == "" || in == "-":
			return usageError("--quarantine %s is also the input (stdin reads it)", quarantine)
		default:
			return usageError("--quarantine %s is also an input file (%s)", quarantine, in)
		}
	}
	return nil
}

// statInput returns the FileInfo of a named input, or of stdin for "-" or
// "" (an error when stdin is not a file).
func statInput(name string, stdin io.Reader) (os.FileInfo, error) {
	if name != "" && name != "-" {
		return os.Stat(name)
	}
	f, ok := stdin.(*os.File)
	if !ok {
		return nil, errors.New("stdin is not a file")
	}
	return f.Stat()
}

// Write writes one reject to the quarantine file without reporting it, for
// library code that reports rejects itself (ordering.MergeJSONL,
// clean.Stream).
func (s *rejectSink) Write(rj *cdc.Reject) error {
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
