package cdc

import "errors"

// ErrOption is matched (errors.Is) by every *OptionError: an option value,
// or a combination of options, that a library entry point refuses before
// it reads, writes or opens anything. The command line reports such an
// error as a usage error (exit code 2).
var ErrOption = errors.New("invalid option")

// OptionError is an option value or combination that cannot work, found by
// an options type's Validate method. The entry points that take those
// options (ordering.MergeJSONL, recovery.Open, server.New, ...) call
// Validate first and return its error unchanged, so a Go caller meets the
// same refusal as the command line, in the same words.
type OptionError struct {
	// Option names the option at fault as the command line spells its
	// flag ("--on-error", "--max-body"); the Go field is named alike.
	Option string
	// Reason is what is wrong with it, the rest of the sentence after
	// Option ("is only used with --on-error quarantine").
	Reason string
}

// Error returns Option and Reason as one sentence, the text the command
// line prints.
func (e *OptionError) Error() string { return e.Option + " " + e.Reason }

// Is reports whether target is ErrOption, so that errors.Is(err, ErrOption)
// finds an *OptionError anywhere in err's chain.
func (e *OptionError) Is(target error) bool { return target == ErrOption }
