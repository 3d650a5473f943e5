package cdc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cdclog/cdclog/internal/dirsync"
)

// RejectFile is a quarantine file: a RejectWriter on a file that
// CreateRejectFile made durable, for a run that has no database to keep
// rejects in (cdclog demangle, merge). Close flushes and fsyncs it.
type RejectFile struct {
	name string
	file *os.File
	w    *RejectWriter
}

// InputError is CreateRejectFile's refusal of a quarantine file that is
// also one of the run's inputs: creating it would empty that input. It
// matches ErrOption (errors.Is): the command line reports it as a usage
// error, in its words.
type InputError struct {
	// Path is the quarantine file.
	Path string
	// Input is the input it is: a file name, or "-" for stdin.
	Input string
}

// Error names the file as the command line's flag does: "--quarantine
// PATH is also an input file (INPUT)", or "is also the input (stdin
// reads it)".
func (e *InputError) Error() string {
	if e.Input == "-" {
		return fmt.Sprintf("--quarantine %s is also the input (stdin reads it)", e.Path)
	}
	return fmt.Sprintf("--quarantine %s is also an input file (%s)", e.Path, e.Input)
}

// Is reports whether target is ErrOption.
func (e *InputError) Is(target error) bool { return target == ErrOption }

// CreateRejectFile creates (or empties) the quarantine file at path and
// syncs its directory, so that the file a run reports is there after a
// power loss. It first refuses, with an *InputError, a path that is one
// of the run's inputs, however it is reached (a symbolic or hard link is
// the same file): inputs are file names, "-" or "" being stdin, and no
// inputs means stdin alone.
func CreateRejectFile(path string, inputs []string, stdin io.Reader) (*RejectFile, error) {
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	if err := checkNotAnInput(path, inputs, stdin); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("quarantine file: %w", err)
	}
	// The writer fsyncs the file on Close; its directory entry must be
	// durable too, or a power loss can drop a file the run reported.
	if err := dirsync.Sync(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, fmt.Errorf("quarantine file: %w", err)
	}
	return &RejectFile{name: path, file: f, w: NewRejectWriter(f)}, nil
}

// checkNotAnInput refuses a quarantine file that is one of the inputs.
func checkNotAnInput(quarantine string, inputs []string, stdin io.Reader) error {
	q, err := os.Stat(quarantine)
	if err != nil {
		return nil // does not exist yet: cannot be an input
	}
	for _, in := range inputs {
		fi, err := statInput(in, stdin)
		if err != nil || !os.SameFile(q, fi) {
			continue
		}
		if in == "" {
			in = "-"
		}
		return &InputError{Path: quarantine, Input: in}
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

// Name returns the file's path, as given to CreateRejectFile.
func (f *RejectFile) Name() string { return f.name }

// Write appends one reject to the file; the error names the file.
func (f *RejectFile) Write(rj *Reject) error {
	if err := f.w.Write(rj); err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	return nil
}

// Count returns the number of rejects written.
func (f *RejectFile) Count() uint64 { return f.w.Count() }

// Close flushes, fsyncs and closes the file, so that what was quarantined
// is on disk when the run reports success; the error names the file.
// Closing it again, or closing a nil *RejectFile, does nothing.
func (f *RejectFile) Close() error {
	if f == nil || f.file == nil {
		return nil
	}
	err := f.w.Close()
	if cerr := f.file.Close(); err == nil {
		err = cerr
	}
	f.file = nil
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	return nil
}
